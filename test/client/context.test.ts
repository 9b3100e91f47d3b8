import { describe, expect, it } from 'vitest';
import { DEFAULT_TASK_QUEUE, providerTaskQueue } from '../../src/client';
import { DEFAULT_TASK_QUEUE as WORKER_DEFAULT_TASK_QUEUE } from '../../src/worker';

describe('task queue names the client and the worker share (src/core/task-queues.ts)', () => {
  it("the workflows' default task queue is the worker's", () => {
    expect(DEFAULT_TASK_QUEUE).toBe(WORKER_DEFAULT_TASK_QUEUE);
  });

  it('F9: the default deployment keeps asyncjob-provider-<name>; another deployment gets queues of its own', () => {
    expect(providerTaskQueue(DEFAULT_TASK_QUEUE, 'reports')).toBe('asyncjob-provider-reports');
    expect(providerTaskQueue('billing', 'reports')).toBe('billing-provider-reports');
    expect(providerTaskQueue('billing', 'reports')).not.toBe(providerTaskQueue('shipping', 'reports'));
  });
});
