/**
 * The Temporal connection, one reading for every process (src/client/connection.ts), following Temporal's
 * environment conventions, and the workflows' task queue.
 */
import { DEFAULT_TASK_QUEUE } from '../core/task-queues';
import { nonEmpty, setting, type SettingUser } from './setting';

const usedBy: readonly SettingUser[] = ['worker', 'client', 'CLI', 'doctor', 'audit', 'mcp'];

/** Temporal's address, namespace, TLS and API key, and the workflows' task queue. */
export const temporalSettings = {
  TEMPORAL_ADDRESS: setting(nonEmpty().default('127.0.0.1:7233'), {
    group: 'temporal',
    usedBy,
    description: 'host:port of the Temporal frontend',
    example: 'temporal.internal:7233',
  }),
  TEMPORAL_NAMESPACE: setting(nonEmpty().default('default'), {
    group: 'temporal',
    usedBy,
    description: "the Temporal namespace; it must exist with asyncjob's search attributes registered",
    example: 'payments-prod',
  }),
  TEMPORAL_TLS_CERT: setting(nonEmpty().optional(), {
    group: 'temporal',
    usedBy,
    description: 'file: client certificate (PEM) for mTLS; set together with TEMPORAL_TLS_KEY',
    example: '/etc/asyncjob/client.pem',
  }),
  TEMPORAL_TLS_KEY: setting(nonEmpty().optional(), {
    group: 'temporal',
    usedBy,
    description: "file: the client certificate's private key (PEM); set together with TEMPORAL_TLS_CERT",
    example: '/etc/asyncjob/client.key',
  }),
  TEMPORAL_TLS_CA: setting(nonEmpty().optional(), {
    group: 'temporal',
    usedBy,
    description: "file: CA certificate (PEM) the server's certificate is checked against",
    example: '/etc/asyncjob/ca.pem',
    whenUnset: 'system roots',
  }),
  TEMPORAL_TLS_SERVER_NAME: setting(nonEmpty().optional(), {
    group: 'temporal',
    usedBy,
    description: 'TLS server name override',
    example: 'temporal.internal',
  }),
  TEMPORAL_API_KEY: setting(nonEmpty().optional(), {
    group: 'temporal',
    usedBy,
    description: 'API key (Temporal Cloud); turns TLS on',
    example: '(from your secret store)',
    secret: true,
  }),
  ASYNCJOB_TASK_QUEUE: setting(nonEmpty().default(DEFAULT_TASK_QUEUE), {
    group: 'temporal',
    usedBy: ['worker', 'client', 'CLI', 'mcp'],
    description: "the workflows' task queue: clients start operations on the queue the worker serves",
    example: 'asyncjob-reports',
  }),
};
