/**
 * Temporal connection settings from Temporal's environment conventions (via {@link loadConfig}): TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_TLS_CERT / TEMPORAL_TLS_KEY / TEMPORAL_TLS_CA (file paths),
 * TEMPORAL_TLS_SERVER_NAME and TEMPORAL_API_KEY. The same shape suits `Connection.connect` (client) and
 * `NativeConnection.connect` (worker).
 */
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { clientDataConverter } from '../codec/data-converter';
import { loadPayloadCodecs } from '../codec/payload-keys';
import { type Config, loadConfig } from '../config';
import { AsyncJobError } from '../core/errors';
import { AsyncJobConnectionError } from './errors';

/** TLS settings as both Temporal connection kinds take them. */
interface TemporalTls {
  serverNameOverride?: string;
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
}

/** Connection settings derived from the configuration. Holds the API key: never log this object. */
export interface TemporalConnectionSettings {
  address: string;
  namespace: string;
  /** Present when any TLS setting or an API key is given (Temporal Cloud API keys need TLS). */
  tls?: TemporalTls;
  apiKey?: string;
}

function readTlsFile(variable: string, path: string, read: (path: string) => Buffer): Buffer {
  try {
    return read(path);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new AsyncJobError('ASYNCJOB_ERR_CONFIG_INVALID', `${variable}: cannot read ${path}: ${why}`, { cause: err });
  }
}

/**
 * Builds connection settings from a validated configuration, reading the TLS files (`read` is injectable for
 * tests). Throws `ASYNCJOB_ERR_CONFIG_INVALID` naming the variable whose file cannot be read.
 */
export function temporalConnectionSettings(
  config: Config,
  read: (path: string) => Buffer = (p) => readFileSync(p),
): TemporalConnectionSettings {
  const tls: TemporalTls = {};
  if (config.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = config.TEMPORAL_TLS_SERVER_NAME;
  if (config.TEMPORAL_TLS_CA)
    tls.serverRootCACertificate = readTlsFile('TEMPORAL_TLS_CA', config.TEMPORAL_TLS_CA, read);
  if (config.TEMPORAL_TLS_CERT && config.TEMPORAL_TLS_KEY) {
    tls.clientCertPair = {
      crt: readTlsFile('TEMPORAL_TLS_CERT', config.TEMPORAL_TLS_CERT, read),
      key: readTlsFile('TEMPORAL_TLS_KEY', config.TEMPORAL_TLS_KEY, read),
    };
  }
  const useTls = Object.keys(tls).length > 0 || config.TEMPORAL_API_KEY !== undefined;
  return {
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    ...(useTls ? { tls } : {}),
    ...(config.TEMPORAL_API_KEY !== undefined ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}

/** A client connected from the environment, with the configuration it was read from. */
export interface EnvironmentClient {
  client: Client;
  connection: Connection;
  config: Config;
}

/**
 * Connects using Temporal's environment conventions and the payload keys (ASYNCJOB_PAYLOAD_KEYS), as every reader
 * of operations does: the client, the audit's witness, the replay check. Throws `ConfigError` for a bad
 * environment or key and `TlsFileError` for an unreadable TLS file (both before connecting), and
 * {@link AsyncJobConnectionError} when the server cannot be reached within `connectTimeoutMs`.
 */
export async function connectFromEnvironment(
  env: NodeJS.ProcessEnv,
  connectTimeoutMs = 10_000,
): Promise<EnvironmentClient> {
  const config = loadConfig(env);
  const settings = temporalConnectionSettings(config);
  const { payloadCodecs } = await loadPayloadCodecs(env);
  let connection: Connection;
  try {
    connection = await Connection.connect({
      address: settings.address,
      connectTimeout: connectTimeoutMs,
      ...(settings.tls ? { tls: settings.tls } : {}),
      ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    });
  } catch (err) {
    throw new AsyncJobConnectionError(settings.address, { cause: err });
  }
  const dataConverter = clientDataConverter(payloadCodecs);
  return { client: new Client({ connection, namespace: settings.namespace, dataConverter }), connection, config };
}
