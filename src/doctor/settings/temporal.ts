/** The Temporal connection settings: one reading for every process (src/client/connection.ts). */
import { type Setting, type SettingUser } from './setting';

const temporalUsers: readonly SettingUser[] = ['worker', 'client', 'CLI', 'doctor', 'audit', 'mcp'];

/** Temporal's address, namespace, TLS and API key, and the workflows' task queue. */
export const TEMPORAL_SETTINGS: readonly Setting[] = [
  {
    name: 'TEMPORAL_ADDRESS',
    usedBy: temporalUsers,
    default: '`127.0.0.1:7233`',
    meaning: 'host:port of the Temporal frontend',
    example: 'temporal.internal:7233',
  },
  {
    name: 'TEMPORAL_NAMESPACE',
    usedBy: temporalUsers,
    default: '`default`',
    meaning: "the Temporal namespace; it must exist with asyncjob's search attributes registered",
    example: 'payments-prod',
  },
  {
    name: 'TEMPORAL_TLS_CERT',
    usedBy: temporalUsers,
    default: '',
    meaning: 'file: client certificate (PEM) for mTLS; set together with TEMPORAL_TLS_KEY',
    example: '/etc/asyncjob/client.pem',
  },
  {
    name: 'TEMPORAL_TLS_KEY',
    usedBy: temporalUsers,
    default: '',
    meaning: "file: the client certificate's private key (PEM); set together with TEMPORAL_TLS_CERT",
    example: '/etc/asyncjob/client.key',
  },
  {
    name: 'TEMPORAL_TLS_CA',
    usedBy: temporalUsers,
    default: 'system roots',
    meaning: "file: CA certificate (PEM) the server's certificate is checked against",
    example: '/etc/asyncjob/ca.pem',
  },
  {
    name: 'TEMPORAL_TLS_SERVER_NAME',
    usedBy: temporalUsers,
    default: '',
    meaning: 'TLS server name override',
    example: 'temporal.internal',
  },
  {
    name: 'TEMPORAL_API_KEY',
    usedBy: temporalUsers,
    default: '',
    meaning: 'API key (Temporal Cloud); turns TLS on; never printed',
    example: '(from your secret store)',
  },
  {
    name: 'ASYNCJOB_TASK_QUEUE',
    usedBy: ['worker', 'client', 'CLI', 'mcp'],
    default: '`asyncjob`',
    meaning: "the workflows' task queue: clients start operations on the queue the worker serves",
    example: 'asyncjob-reports',
  },
];
