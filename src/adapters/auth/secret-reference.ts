/**
 * Secrets by reference (T4): a provider document names where a secret lives (an environment variable or a file)
 * and the worker reads it here at the moment of each request, so the secret never enters workflow inputs, history,
 * queries, logs or the store, and rotating the file or the variable needs no restart.
 */
import { readFile } from 'node:fs/promises';
import { CredentialUnavailableError } from '../http';

/** Where a secret lives, as a provider document names it: exactly one of the two. */
export interface SecretReference {
  readonly secretEnv?: string | undefined;
  readonly secretFile?: string | undefined;
}

/** The environment references are read from (`process.env`, or a test's). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** Refuses a value that could split a header line. */
function oneLine(value: string, where: string): string {
  if (/[\r\n\0]/.test(value)) throw new CredentialUnavailableError(`${where} contains a line break`);
  return value;
}

/**
 * Reads the secret now. Throws {@link CredentialUnavailableError} naming the reference (never a value) when it is
 * unset, unreadable, empty or spans lines. A file is read whole and trimmed.
 */
export async function readSecret(reference: SecretReference, env: Environment): Promise<string> {
  if (reference.secretEnv !== undefined) {
    const value = env[reference.secretEnv];
    if (value === undefined || value === '')
      throw new CredentialUnavailableError(`credential environment variable ${reference.secretEnv} is not set`);
    return oneLine(value, `credential environment variable ${reference.secretEnv}`);
  }
  const file = reference.secretFile;
  if (file === undefined) throw new CredentialUnavailableError('the credential names no secretEnv nor secretFile');
  let text: string;
  try {
    text = (await readFile(file, 'utf8')).trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new CredentialUnavailableError(`credential file ${file} cannot be read (${code})`);
  }
  if (text === '') throw new CredentialUnavailableError(`credential file ${file} is empty`);
  return oneLine(text, `credential file ${file}`);
}

/**
 * A value that is not secret, given literally or by environment variable (a user name, a client ID); read now.
 * Throws {@link CredentialUnavailableError} naming the variable when it is unset.
 */
export function readSetting(literal: string | undefined, envName: string | undefined, env: Environment): string {
  if (literal !== undefined) return literal;
  const value = envName === undefined ? undefined : env[envName];
  if (value === undefined || value === '')
    throw new CredentialUnavailableError(`environment variable ${envName ?? '(none named)'} is not set`);
  return oneLine(value, `environment variable ${envName}`);
}
