import { describe, expect, it } from 'vitest';
import { providerTaskQueue as workerProviderTaskQueue } from '../../src/adapters/providers/registry';
import { DEFAULT_TASK_QUEUE, providerTaskQueue } from '../../src/client';
import { DEFAULT_TASK_QUEUE as WORKER_DEFAULT_TASK_QUEUE } from '../../src/worker';

describe('the client repeats two names of the worker side without importing it', () => {
  it("the workflows' default task queue is the worker's", () => {
    expect(DEFAULT_TASK_QUEUE).toBe(WORKER_DEFAULT_TASK_QUEUE);
  });

  it.each(['reports', 'demo-reports', 'a.b:c_d'])("the activity task queue of provider %s is the worker's", (name) => {
    expect(providerTaskQueue(name)).toBe(workerProviderTaskQueue(name));
  });
});
