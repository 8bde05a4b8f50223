import { type JetStreamManager, RetentionPolicy, StorageType, type StreamConfig, type StreamInfo } from 'nats';
import { ensureStream, replicaPolicy, StreamDefinition } from './jetstream-streams';

const definition: StreamDefinition = {
  name: 'USAGE',
  subjects: ['usage.>'],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  duplicate_window: 120_000_000_000,
};

/** An error as nats.js makes it from a JetStream API refusal. */
function apiError(err_code: number, description: string): Error {
  return Object.assign(new Error(description), { code: '400', api_error: { code: 400, err_code, description } });
}

/**
 * A JetStream manager holding one stream at most, which refuses more replicas than `servers` JetStream
 * servers can place, the way nats-server 2.9 does.
 */
function fakeManager({ servers, existing, joining }: { servers: number; existing?: number; joining?: number }) {
  let stream: StreamConfig | undefined = existing ? ({ ...definition, num_replicas: existing } as StreamConfig) : undefined;
  const calls: string[] = [];
  const place = (replicas: number) => {
    if (servers === 1 && replicas > 1) throw apiError(10074, 'replicas > 1 not supported in non-clustered mode');
    if (replicas > servers) throw apiError(10005, 'no suitable peers for placement');
  };
  const manager = {
    streams: {
      info: async (name: string) => {
        calls.push(`info ${name}`);
        if (!stream) throw apiError(10059, 'stream not found');
        return { config: stream } as StreamInfo;
      },
      add: async (config: StreamConfig) => {
        calls.push(`add R${config.num_replicas}`);
        try {
          place(config.num_replicas);
        } finally {
          // A forming cluster: one more server has joined JetStream by the next call.
          if (joining && servers < joining) servers++;
        }
        stream = config;
        return { config } as StreamInfo;
      },
      update: async (_name: string, config: StreamConfig) => {
        calls.push(`update R${config.num_replicas}`);
        place(config.num_replicas);
        stream = config;
        return { config } as StreamInfo;
      },
    },
  } as unknown as JetStreamManager;
  return { manager, calls, replicas: () => stream?.num_replicas };
}

const log = { log: jest.fn(), warn: jest.fn() };

beforeEach(() => jest.clearAllMocks());

describe('replicaPolicy', () => {
  it('asks 3 copies on a server that is part of a cluster, 1 on a lone server', () => {
    expect(replicaPolicy({ cluster: 'gateway', version: '2.9.10' }).replicas).toBe(3);
    expect(replicaPolicy({ version: '2.9.10' }).replicas).toBe(1);
    expect(replicaPolicy(undefined).replicas).toBe(1);
  });

  it('scales existing streams up only on nats-server 2.10 and later', () => {
    expect(['2.9.10', '2.9.25', '2.10.0', '2.11.4', '3.0.0', undefined].map((version) => replicaPolicy({ cluster: 'c', version }).scaleUp)).toEqual([
      false,
      false,
      true,
      true,
      true,
      false,
    ]);
  });
});

const R3 = { replicas: 3, scaleUp: true, serverVersion: '2.10.0' };
const R1 = { replicas: 1, scaleUp: true, serverVersion: '2.10.0' };

describe('ensureStream', () => {
  it('creates a missing stream with 3 replicas on a cluster of three', async () => {
    const { manager, replicas } = fakeManager({ servers: 3 });
    await expect(ensureStream(manager, definition, R3, log)).resolves.toBe(3);
    expect(replicas()).toBe(3);
    expect(log.warn).not.toHaveBeenCalled();
  });

  it('settles for 1 replica where three cannot be placed (a cluster of two), and says so', async () => {
    const { manager, calls, replicas } = fakeManager({ servers: 2 });
    await expect(ensureStream(manager, definition, R3, log)).resolves.toBe(1);
    expect(calls).toEqual(['info USAGE', 'add R3', 'add R1']);
    expect(replicas()).toBe(1);
    expect(log.log).toHaveBeenCalledWith(expect.stringContaining('no suitable peers for placement'));
  });

  it('waits for a forming cluster to place three replicas rather than making the stream with one', async () => {
    const { manager, calls, replicas } = fakeManager({ servers: 2, joining: 3 });
    await expect(ensureStream(manager, definition, { ...R3, placementWaitMs: 5_000 }, log)).resolves.toBe(3);
    expect(calls).toEqual(['info USAGE', 'add R3', 'add R3']);
    expect(replicas()).toBe(3);
  });

  it('waits a cluster of two only so long, then makes the stream with one replica', async () => {
    const { manager, calls, replicas } = fakeManager({ servers: 2 });
    await expect(ensureStream(manager, definition, { ...R3, placementWaitMs: 1_200 }, log)).resolves.toBe(1);
    expect(calls.filter((call) => call === 'add R3').length).toBeGreaterThanOrEqual(2);
    expect(calls.at(-1)).toBe('add R1');
    expect(replicas()).toBe(1);
  });

  it('waits for placement on a cluster only', () => {
    expect(replicaPolicy({ cluster: 'gateway', version: '2.10.0' }).placementWaitMs).toBe(30_000);
    expect(replicaPolicy({ version: '2.10.0' }).placementWaitMs).toBe(0);
  });

  it('scales an R1 stream up to R3 once the cluster has three servers', async () => {
    const { manager, calls, replicas } = fakeManager({ servers: 3, existing: 1 });
    await expect(ensureStream(manager, definition, R3, log)).resolves.toBe(3);
    expect(calls).toEqual(['info USAGE', 'update R3']);
    expect(replicas()).toBe(3);
    expect(log.log).toHaveBeenCalledWith('scaled JetStream stream USAGE from 1 to 3 replicas');
  });

  it('leaves an R1 stream as it is on nats-server 2.9, with a warning that says why and where to read more', async () => {
    const { manager, calls, replicas } = fakeManager({ servers: 3, existing: 1 });
    await expect(ensureStream(manager, definition, { ...R3, scaleUp: false, serverVersion: '2.9.10' }, log)).resolves.toBe(1);
    expect(calls).toEqual(['info USAGE']);
    expect(replicas()).toBe(1);
    expect(log.warn).toHaveBeenCalledWith(expect.stringMatching(/USAGE has 1 replica\(s\) on a NATS cluster: nats-server 2\.9\.10 .*docs\/operations\.md/));
  });

  it('leaves an R1 stream as it is where three cannot be placed, without a warning', async () => {
    const { manager, replicas } = fakeManager({ servers: 2, existing: 1 });
    await expect(ensureStream(manager, definition, R3, log)).resolves.toBe(1);
    expect(replicas()).toBe(1);
    expect(log.warn).not.toHaveBeenCalled();
  });

  it('never scales a stream down: an operator’s R5, or an R3 seen from a lone server', async () => {
    for (const [existing, policy] of [
      [5, R3],
      [3, R1],
    ] as const) {
      const { manager, calls, replicas } = fakeManager({ servers: 5, existing });
      await expect(ensureStream(manager, definition, policy, log)).resolves.toBe(existing);
      expect(calls).toEqual(['info USAGE']);
      expect(replicas()).toBe(existing);
    }
  });

  it('takes a stream another service created meanwhile (its add refused) as it is', async () => {
    const { manager } = fakeManager({ servers: 3 });
    let first = true;
    const add = manager.streams.add.bind(manager.streams);
    manager.streams.add = async (config) => {
      if (first) {
        first = false;
        // The other service's add lands first, with the same definition.
        await add(config as StreamConfig);
        throw apiError(10058, 'stream name already in use with a different configuration');
      }
      return add(config as StreamConfig);
    };
    await expect(ensureStream(manager, definition, R3, log)).resolves.toBe(3);
  });

  it('rejects when JetStream cannot be asked (not "not found"), creating nothing', async () => {
    const { manager, calls } = fakeManager({ servers: 3 });
    manager.streams.info = async () => {
      throw Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' });
    };
    await expect(ensureStream(manager, definition, R3, log)).rejects.toThrow('TIMEOUT');
    expect(calls).toEqual([]);
  });
});
