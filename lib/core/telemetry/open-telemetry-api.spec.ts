import { ZkLockError } from '../errors';
import { loadOpenTelemetry } from './open-telemetry-api';

describe('loadOpenTelemetry', () => {
  const notFound = (id: string) =>
    Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });

  it('is undefined when @opentelemetry/api is not installed', () => {
    expect(
      loadOpenTelemetry((id) => {
        throw notFound(id);
      }),
    ).toBeUndefined();
  });

  it('gives the installed API', () => {
    expect(loadOpenTelemetry()?.metrics.getMeterProvider).toEqual(expect.any(Function));
  });

  it('reports a broken install (a dependency of the API missing) as a ZkLockError', () => {
    const broken = () => {
      throw notFound('some-dependency');
    };
    expect(() => loadOpenTelemetry(broken)).toThrow(ZkLockError);
    expect(() => loadOpenTelemetry(broken)).toThrow(/could not be loaded.*telemetry: false/);
  });
});
