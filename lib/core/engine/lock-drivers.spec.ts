import fc from 'fast-check';
import {
  positionOf,
  sequenceOf,
  sortContenders,
  sortKey,
} from './lock-drivers';
import { holdingCount } from './lock-drivers';

describe('lock naming (Curator-compatible)', () => {
  it('orders by the digits after the last "lock-", whatever the uuid', () => {
    const names = ['_c_ffff-lock-0000000003', '_c_0000-lock-0000000010', '_c_aaaa-lock-0000000001'];
    expect(sortContenders(names)).toEqual([
      '_c_aaaa-lock-0000000001',
      '_c_ffff-lock-0000000003',
      '_c_0000-lock-0000000010',
    ]);
  });

  it('uses the LAST "lock-" (a uuid or prefix may contain it)', () => {
    expect(sortKey('_c_x-lock-y-lock-0000000007')).toBe('0000000007');
    expect(sequenceOf('_c_x-lock-y-lock-0000000007')).toBe(7);
    expect(sequenceOf('foreign')).toBe(-1);
  });

  it("orders peers' nodes by their sequence too: Curator's unprotected names and kazoo's", () => {
    const names = [
      '_c_ours-lock-0000000005',
      '1f2e3d4c5b6a79880716253443526170__lock__0000000004',
      'lock-0000000006',
      '0a0b0c0d0e0f10111213141516171819__rlock__0000000002',
      '_c_ours-lock-0000000003',
    ];
    expect(sortContenders(names)).toEqual([
      '0a0b0c0d0e0f10111213141516171819__rlock__0000000002',
      '_c_ours-lock-0000000003',
      '1f2e3d4c5b6a79880716253443526170__lock__0000000004',
      '_c_ours-lock-0000000005',
      'lock-0000000006',
    ]);
    expect(sequenceOf('1f2e3d4c5b6a79880716253443526170__lock__0000000004')).toBe(4);
    expect(positionOf(names, '_c_ours-lock-0000000005', new Set())).toEqual({
      predecessor: '1f2e3d4c5b6a79880716253443526170__lock__0000000004',
      ahead: 3,
    });
  });

  it('orders read/write and lease nodes by their sequence too, not by their uuid', () => {
    const rw = [
      '_c_ffff-__READ__0000000001',
      '_c_0000-__WRIT__0000000002',
      '_c_8888-__READ__0000000000',
    ];
    expect(sortContenders(rw)).toEqual([
      '_c_8888-__READ__0000000000',
      '_c_ffff-__READ__0000000001',
      '_c_0000-__WRIT__0000000002',
    ]);
    expect(rw.map(sequenceOf)).toEqual([1, 2, 0]);
    const leases = ['_c_ffff-lease-0000000004', '_c_0000-lease-0000000012'];
    expect(sortContenders(leases)).toEqual(leases);
    expect(sequenceOf('_c_0000-lease-0000000012')).toBe(12);
    expect(sortKey('__READ__x-lock-0000000003')).toBe('0000000003'); // the LAST marker counts
    // Curator LeaderLatch's participants, ours and Java's alike, by the digits after "latch-".
    const latches = ['_c_ffff-latch-0000000007', '_c_0000-latch-0000000012', 'latch-0000000003'];
    expect(sortContenders(latches)).toEqual([
      'latch-0000000003',
      '_c_ffff-latch-0000000007',
      '_c_0000-latch-0000000012',
    ]);
    expect(sequenceOf('_c_0000-latch-0000000012')).toBe(12);
  });

  it('gives every name the sort key and sequence of the general rule (the 10-digit shortcut)', () => {
    // The general rule without the shortcut: kazoo's pattern, else the digits after the last
    // marker, else the whole name.
    const markers = ['lock-', '__READ__', '__WRIT__', 'lease-', 'latch-'];
    const reference = (name: string): string => {
      const kazoo = /__r?lock__(\d{10})$/.exec(name);
      if (kazoo) return kazoo[1];
      let end = -1;
      for (const marker of markers) {
        const i = name.lastIndexOf(marker);
        if (i >= 0) end = Math.max(end, i + marker.length);
      }
      return end >= 0 ? name.slice(end) : name;
    };
    const part = fc.oneof(
      fc.constantFrom(...markers, '__lock__', '__rlock__', '_c_', '-', '_', 'r', '-000000001'),
      fc.stringMatching(/^[0-9]{1,11}$/),
      fc.stringMatching(/^[a-f0-9-]{0,8}$/),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 6 }), (parts) => {
        const name = parts.join('');
        const key = reference(name);
        expect(sortKey(name)).toBe(key);
        expect(sequenceOf(name)).toBe(/^\d+$/.test(key) ? Number(key) : -1);
      }),
      { numRuns: 5000 },
    );
    expect(sortKey('_c_x-lock-00000000012')).toBe('00000000012'); // 11 digits: the general rule
    expect(sequenceOf('_c_x-lock--000000001')).toBe(-1); // a wrapped, negative sequence
    expect(sortKey('0000000012')).toBe('0000000012'); // no marker: the whole name
  });

  it('counts the holders: the readers ahead of every other node, else the first node alone', () => {
    expect(holdingCount([])).toBe(0);
    expect(holdingCount(['a-__READ__1', 'b-__READ__2', 'c-__WRIT__3', 'd-__READ__4'])).toBe(2);
    expect(holdingCount(['a-__READ__1', 'b-__READ__2'])).toBe(2);
    expect(holdingCount(['c-__WRIT__3', 'd-__READ__4'])).toBe(1);
    expect(holdingCount(['a-lock-1', 'b-lock-2'])).toBe(1);
    expect(holdingCount(['x__rlock__0000000001', 'y__lock__0000000002'])).toBe(1);
  });

  it('gives the predecessor, skipping ignored (released) nodes of our own', () => {
    const children = ['a-lock-0000000001', 'b-lock-0000000002', 'c-lock-0000000003'];
    expect(positionOf(children, 'c-lock-0000000003', new Set())).toEqual({
      predecessor: 'b-lock-0000000002',
      ahead: 2,
    });
    expect(positionOf(children, 'c-lock-0000000003', new Set(['b-lock-0000000002']))).toEqual({
      predecessor: 'a-lock-0000000001',
      ahead: 1,
    });
    expect(positionOf(children, 'a-lock-0000000001', new Set())).toEqual({
      predecessor: null,
      ahead: 0,
    });
    expect(positionOf(children, 'gone-lock-0000000009', new Set())).toBeNull();
  });
});
