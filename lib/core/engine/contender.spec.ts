import { ownNodes } from './contender';

describe('protected node names', () => {
  it('finds our node by its protected uuid prefix only', () => {
    const children = ['_c_abc-lock-0000000001', '_c_abcd-lock-0000000002'];
    expect(ownNodes(children, 'abcd')).toEqual(['_c_abcd-lock-0000000002']);
    expect(ownNodes(children, 'zzz')).toEqual([]);
  });
});
