/**
 * Opens the store a location names: `sqlite:PATH` (relative to the working directory) or
 * `postgres://...` / `postgresql://...` (a connection string). Used by the worker and the CLI.
 */
import { type OperationStore, type OperationStoreOptions } from './operation-store';
import { openPostgresStore } from './postgres-store';
import { DEFAULT_SQLITE_PATH, openSqliteStore } from './sqlite-store';
import { StoreError } from './store-errors';

/** The location used when none is configured. */
export const DEFAULT_STORE_LOCATION = `sqlite:${DEFAULT_SQLITE_PATH}`;

/** A parsed store location. */
export type StoreLocation =
  | { readonly engine: 'sqlite'; readonly path: string }
  | { readonly engine: 'postgres'; readonly connectionString: string };

/** Parses a store location; throws `ASYNCJOB_ERR_STORE_LOCATION` naming what is wrong. Pure. */
export function parseStoreLocation(location: string): StoreLocation {
  if (location.startsWith('sqlite:')) {
    const path = location.slice('sqlite:'.length);
    if (path.length === 0)
      throw new StoreError(
        'ASYNCJOB_ERR_STORE_LOCATION',
        'sqlite: needs a file path, e.g. sqlite:.asyncjob/asyncjob.db',
      );
    return { engine: 'sqlite', path };
  }
  if (/^postgres(ql)?:\/\/./.test(location)) return { engine: 'postgres', connectionString: location };
  throw new StoreError(
    'ASYNCJOB_ERR_STORE_LOCATION',
    `unknown store location ${JSON.stringify(location.replace(/\/\/[^@/]*@/, '//***@'))}; use sqlite:PATH or postgres://...`,
  );
}

/** Options for {@link openStore}. */
export interface OpenStoreOptions extends OperationStoreOptions {
  /** For SQLite: refuse to create a missing file. */
  readonly mustExist?: boolean;
  /** For PostgreSQL: the schema holding the tables. */
  readonly schema?: string;
}

/** Opens and migrates the store at `location`. */
export async function openStore(location: string, options: OpenStoreOptions = {}): Promise<OperationStore> {
  const parsed = parseStoreLocation(location);
  const common = { hmacKey: options.hmacKey, forbiddenValues: options.forbiddenValues };
  if (parsed.engine === 'sqlite')
    return openSqliteStore({ ...common, path: parsed.path, fileMustExist: options.mustExist ?? false });
  return openPostgresStore({ ...common, connectionString: parsed.connectionString, schema: options.schema });
}
