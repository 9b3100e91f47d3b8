/**
 * Credentials by reference (T4): an adapter document names where a secret lives (an environment variable or a
 * file); the worker resolves it at the moment of each request, so the secret itself never enters workflow
 * inputs, history, queries, logs or the store, and rotating the file or variable needs no restart.
 */
import { readFile } from 'node:fs/promises';
import { AsyncJobError } from '../core/errors';

/** Where a credential's secret lives, as written in a provider contract. */
export type CredentialReference =
  | { scheme: 'none' }
  | { scheme: 'bearer'; secretEnv: string }
  | { scheme: 'bearer'; secretFile: string }
  | { scheme: 'header'; headerName: string; secretEnv: string }
  | { scheme: 'header'; headerName: string; secretFile: string };

/** A credential ready to be added to one request, at the last moment. */
interface ResolvedCredential {
  headerName: string;
  headerValue: string;
}

/** Supplies the credential for each request; `undefined` when the provider needs none. */
export type CredentialSupplier = () => Promise<ResolvedCredential | undefined>;

/** Our fault: the referenced secret is missing. The message names the reference, never a value. */
function missingCredential(message: string): AsyncJobError {
  return new AsyncJobError('ASYNCJOB_ERR_CREDENTIAL_MISSING', message);
}

/** Builds a supplier that reads the secret from its reference on every call. */
export function credentialSupplier(ref: CredentialReference, env: NodeJS.ProcessEnv = process.env): CredentialSupplier {
  if (ref.scheme === 'none') return async () => undefined;
  const headerName = ref.scheme === 'bearer' ? 'authorization' : ref.headerName.toLowerCase();
  const format = (secret: string): string => (ref.scheme === 'bearer' ? `Bearer ${secret}` : secret);
  return async () => {
    let secret: string | undefined;
    if ('secretEnv' in ref) {
      secret = env[ref.secretEnv];
      if (!secret) throw missingCredential(`credential environment variable ${ref.secretEnv} is not set`);
    } else {
      try {
        secret = (await readFile(ref.secretFile, 'utf8')).trim();
      } catch (err) {
        throw missingCredential(
          `credential file ${ref.secretFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        );
      }
      if (!secret) throw missingCredential(`credential file ${ref.secretFile} is empty`);
    }
    if (/[\r\n]/.test(secret)) throw missingCredential('credential contains a line break');
    return { headerName, headerValue: format(secret) };
  };
}
