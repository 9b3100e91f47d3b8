/**
 * Temporal connection settings from Temporal's environment conventions (via {@link loadConfig}): TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_TLS_CERT / TEMPORAL_TLS_KEY / TEMPORAL_TLS_CA (file paths),
 * TEMPORAL_TLS_SERVER_NAME and TEMPORAL_API_KEY. The same shape suits `Connection.connect` (client) and
 * `NativeConnection.connect` (worker).
 */
import { readFileSync } from 'node:fs';
import { type Config } from '../config';
import { AsyncJobError } from '../core/errors';

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
