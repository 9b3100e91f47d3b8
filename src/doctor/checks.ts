/**
 * The checks of `asyncjob doctor` beyond the environment: Temporal (reachable, the namespace, asyncjob's search
 * attributes), the store (opens, migrations current; read-only: nothing is created or migrated), the artifact
 * directory (writable), and the webhook and metrics ports (free). Each returns findings and never throws.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdtemp, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Connection } from '@temporalio/client';
import { SQLITE_MIGRATIONS } from '../adapters/store/migrations/sqlite';
import { POSTGRES_MIGRATIONS } from '../adapters/store/migrations/postgres';
import type { Migration } from '../adapters/store/migrations/migration';
import { parseStoreLocation } from '../adapters/store/open-store';
import { temporalConnectionSettings } from '../client/connection';
import type { Config } from '../config';
import { SEARCH_ATTRIBUTES } from '../core/search-attribute-names';
import { ok, problem, type Finding } from './findings';

/** Temporal's `IndexedValueType` numbers, by the names the CLI and `SEARCH_ATTRIBUTES` use. */
const INDEXED_VALUE_TYPES: Readonly<Record<number, string>> = {
  1: 'Text',
  2: 'Keyword',
  3: 'Int',
  4: 'Double',
  5: 'Bool',
  6: 'Datetime',
  7: 'KeywordList',
};

/** gRPC status codes we tell apart. */
const GRPC = { notFound: 5, permissionDenied: 7, unimplemented: 12, unauthenticated: 16 } as const;

function grpcCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

function messageOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.slice(0, 300);
}

function redactUrl(location: string): string {
  return location.replace(/\/\/[^@/]*@/, '//***@');
}

/** Temporal: reachable, the namespace exists, asyncjob's search attributes are registered with their types. */
export async function checkTemporal(config: Config, timeoutMs: number): Promise<Finding[]> {
  let settings;
  try {
    settings = temporalConnectionSettings(config);
  } catch {
    // An unreadable TLS file is already reported by the environment check.
    return [{ check: 'temporal', status: 'skipped', message: 'a TLS file cannot be read' }];
  }
  const { address, namespace } = settings;
  let connection: Connection;
  try {
    connection = await Connection.connect({
      address,
      connectTimeout: timeoutMs,
      ...(settings.tls ? { tls: settings.tls } : {}),
      ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    });
  } catch (err) {
    return [
      problem(
        'temporal',
        'connection',
        `cannot reach Temporal at ${address}${settings.tls ? ' (TLS)' : ''}: ${messageOf(err)}`,
        'start it (npm run temporal -- start, or npm start for the demo) or point TEMPORAL_ADDRESS at it; a secured server also needs TEMPORAL_TLS_* or TEMPORAL_API_KEY',
      ),
      { check: 'namespace', status: 'skipped', message: 'Temporal cannot be reached' },
      { check: 'search-attributes', status: 'skipped', message: 'Temporal cannot be reached' },
    ];
  }
  const findings: Finding[] = [];
  try {
    let version = 'unknown';
    try {
      version = (await connection.workflowService.getSystemInfo({})).serverVersion || 'unknown';
    } catch {
      // Older servers and some proxies do not answer it; reachability is what matters here.
    }
    findings.push(ok('temporal', `Temporal ${version} answers at ${address}${settings.tls ? ' (TLS)' : ''}`));
    try {
      await connection.workflowService.describeNamespace({ namespace });
      findings.push(ok('namespace', `namespace ${namespace} exists`));
    } catch (err) {
      const code = grpcCode(err);
      findings.push(
        code === GRPC.notFound
          ? problem(
              'namespace',
              'setup',
              `namespace ${namespace} does not exist at ${address}`,
              `temporal operator namespace create --namespace ${namespace} --address ${address} (or set TEMPORAL_NAMESPACE to an existing one)`,
            )
          : code === GRPC.permissionDenied || code === GRPC.unauthenticated
            ? problem(
                'namespace',
                'connection',
                `namespace ${namespace}: access refused: ${messageOf(err)}`,
                'check TEMPORAL_API_KEY or the client certificate (TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY) and its permissions on the namespace',
              )
            : problem(
                'namespace',
                'setup',
                `namespace ${namespace} cannot be described: ${messageOf(err)}`,
                'check the namespace (TEMPORAL_NAMESPACE) and the server',
              ),
      );
      findings.push({ check: 'search-attributes', status: 'skipped', message: 'the namespace cannot be read' });
      return findings;
    }
    findings.push(await checkSearchAttributes(connection, namespace, address));
  } finally {
    await connection.close().catch(() => undefined);
  }
  return findings;
}

async function checkSearchAttributes(connection: Connection, namespace: string, address: string): Promise<Finding> {
  let registered: Record<string, number>;
  try {
    const answer = await connection.operatorService.listSearchAttributes({ namespace });
    registered = (answer.customAttributes ?? {}) as Record<string, number>;
  } catch (err) {
    const code = grpcCode(err);
    if (code === GRPC.permissionDenied || code === GRPC.unimplemented) {
      return {
        check: 'search-attributes',
        status: 'warn',
        message: `cannot list the search attributes of ${namespace} (${messageOf(err)}); asyncjob needs ${Object.keys(SEARCH_ATTRIBUTES).join(', ')}`,
        fix: 'check them in the Web UI or with your provider of Temporal; without them starting an operation fails',
      };
    }
    return problem(
      'search-attributes',
      'setup',
      `cannot list the search attributes of ${namespace}: ${messageOf(err)}`,
      'check the server and the namespace',
    );
  }
  const missing: { name: string; type: string }[] = [];
  const wrong: string[] = [];
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) {
    const found = registered[name];
    if (found === undefined) missing.push({ name, type });
    else if (INDEXED_VALUE_TYPES[found] !== type)
      wrong.push(`${name} is ${INDEXED_VALUE_TYPES[found] ?? `type ${found}`}, not ${type}`);
  }
  if (wrong.length > 0) {
    return problem(
      'search-attributes',
      'setup',
      `search attributes of the wrong type in ${namespace}: ${wrong.join('; ')}`,
      "a search attribute's type cannot change: use another namespace, or remove and re-create them (temporal operator search-attribute remove/create)",
    );
  }
  if (missing.length > 0) {
    const byType = new Map<string, string[]>();
    for (const m of missing) byType.set(m.type, [...(byType.get(m.type) ?? []), m.name]);
    const commands = [...byType].map(
      ([type, names]) =>
        `temporal operator search-attribute create --namespace ${namespace} --address ${address} ${names.map((n) => `--name ${n}`).join(' ')} --type ${type}`,
    );
    return problem(
      'search-attributes',
      'setup',
      `asyncjob's search attributes are not registered in ${namespace}: ${missing.map((m) => m.name).join(', ')}`,
      commands.join(' && '),
    );
  }
  return ok('search-attributes', `${Object.keys(SEARCH_ATTRIBUTES).join(', ')} registered in ${namespace}`);
}

/** Compares the applied migration versions with the code's. */
function migrationFinding(
  where: string,
  applied: readonly number[],
  known: readonly Migration[],
  fresh: boolean,
): Finding {
  const knownVersions = new Set(known.map((m) => m.version));
  const latest = Math.max(0, ...knownVersions);
  const unknown = applied.filter((v) => !knownVersions.has(v));
  if (unknown.length > 0) {
    return problem(
      'store',
      'setup',
      `${where} has migration ${unknown.join(', ')}, which this asyncjob does not know (the store was written by a newer version)`,
      'run the asyncjob version that migrated it, or a newer one',
    );
  }
  const appliedSet = new Set(applied);
  const pending = known.filter((m) => !appliedSet.has(m.version)).map((m) => m.version);
  if (pending.length > 0) {
    return {
      check: 'store',
      status: 'warn',
      message: fresh
        ? `${where} is not created yet (${known.length} migrations to apply)`
        : `${where}: ${pending.length} migration${pending.length === 1 ? '' : 's'} pending (${pending.join(', ')} of ${latest})`,
      fix: 'nothing to do before starting: a worker applies them when it starts (audit commands need them applied)',
    };
  }
  return ok('store', `${where} opens, its schema is current (migration ${latest})`);
}

/** The store: it opens and its migrations are current. Read-only: nothing is created or migrated. */
export async function checkStore(location: string): Promise<Finding> {
  let parsed;
  try {
    parsed = parseStoreLocation(location);
  } catch (err) {
    return problem('store', 'environment', messageOf(err), 'set ASYNCJOB_STORE to sqlite:PATH or postgres://...');
  }
  if (parsed.engine === 'sqlite') {
    const file = path.resolve(parsed.path);
    const where = `SQLite store ${file}`;
    const exists = await stat(file).then(
      (s) => s.isFile(),
      () => false,
    );
    if (!exists) {
      const writable = await nearestWritableAncestor(path.dirname(file));
      if (!writable.ok)
        return problem(
          'store',
          'setup',
          `${where} does not exist and cannot be created: ${writable.reason}`,
          `make ${writable.dir} writable by the worker's user, or choose another path in ASYNCJOB_STORE`,
        );
      return migrationFinding(where, [], SQLITE_MIGRATIONS, true);
    }
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { readonly: true, fileMustExist: true });
      const hasTable =
        db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !==
        undefined;
      const applied = hasTable ? db.prepare('SELECT version FROM schema_migrations').pluck().all().map(Number) : [];
      return migrationFinding(where, applied, SQLITE_MIGRATIONS, false);
    } catch (err) {
      return problem(
        'store',
        'setup',
        `${where} cannot be opened: ${messageOf(err)}`,
        'check the file and its permissions, or choose another path in ASYNCJOB_STORE',
      );
    } finally {
      db?.close();
    }
  }
  const where = `PostgreSQL store ${redactUrl(parsed.connectionString)}`;
  const client = new pg.Client({ connectionString: parsed.connectionString, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    return problem(
      'store',
      'setup',
      `${where} cannot be reached: ${messageOf(err)}`,
      'check ASYNCJOB_STORE (host, port, user, password, database) and that the server runs',
    );
  }
  try {
    const applied = await client.query<{ version: number }>('SELECT version FROM schema_migrations').then(
      (r) => r.rows.map((row) => Number(row.version)),
      (err: { code?: string }) => {
        if (err.code === '42P01') return undefined; // no table: a database asyncjob has not used yet
        throw err;
      },
    );
    return migrationFinding(where, applied ?? [], POSTGRES_MIGRATIONS, applied === undefined);
  } catch (err) {
    return problem(
      'store',
      'setup',
      `${where} cannot be read: ${messageOf(err)}`,
      "check the user's rights on the database",
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The closest existing directory at or above `dir`, and whether we may create things in it. */
async function nearestWritableAncestor(
  dir: string,
): Promise<{ ok: true } | { ok: false; dir: string; reason: string }> {
  let current = path.resolve(dir);
  for (;;) {
    const s = await stat(current).catch(() => undefined);
    if (s !== undefined) {
      if (!s.isDirectory()) return { ok: false, dir: current, reason: `${current} is not a directory` };
      try {
        await access(current, constants.W_OK | constants.X_OK);
        return { ok: true };
      } catch {
        return { ok: false, dir: current, reason: `${current} is not writable` };
      }
    }
    const parent = path.dirname(current);
    if (parent === current) return { ok: false, dir: current, reason: 'no existing parent directory' };
    current = parent;
  }
}

/** The artifact directory: writable (a file is created and removed), or creatable. */
export async function checkArtifacts(dir: string): Promise<Finding> {
  const full = path.resolve(dir);
  const s = await stat(full).catch(() => undefined);
  if (s === undefined) {
    const writable = await nearestWritableAncestor(path.dirname(full));
    return writable.ok
      ? ok('artifacts', `${full} does not exist yet; it can be created`)
      : problem(
          'artifacts',
          'setup',
          `${full} does not exist and cannot be created: ${writable.reason}`,
          `create ${full} writable by the worker's user, or set ASYNCJOB_ARTIFACTS_DIR`,
        );
  }
  if (!s.isDirectory())
    return problem('artifacts', 'setup', `${full} is not a directory`, 'set ASYNCJOB_ARTIFACTS_DIR to a directory');
  try {
    const probe = await mkdtemp(path.join(full, `.doctor-${randomBytes(4).toString('hex')}-`));
    await rm(probe, { recursive: true, force: true });
    return ok('artifacts', `${full} is writable`);
  } catch (err) {
    return problem(
      'artifacts',
      'setup',
      `${full} is not writable (${(err as NodeJS.ErrnoException).code ?? messageOf(err)})`,
      `make ${full} writable by the worker's user, or set ASYNCJOB_ARTIFACTS_DIR`,
    );
  }
}

/** Whether a TCP port can be listened on (then released at once). */
async function portFree(host: string, port: number): Promise<{ free: true } | { free: false; code: string }> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve({ free: false, code: err.code ?? err.message }));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve({ free: true })));
  });
}

/** A port a process of ours will listen on: free, or what holds it. */
export async function checkPort(
  check: string,
  variable: string,
  host: string,
  port: number,
  what: string,
): Promise<Finding> {
  if (port === 0) return ok(check, `${what}: a free port is chosen at start (${variable}=0)`);
  const result = await portFree(host, port);
  if (result.free) return ok(check, `${what}: ${host}:${port} is free`);
  return result.code === 'EADDRINUSE'
    ? problem(
        check,
        'setup',
        `${what}: ${host}:${port} is in use (another process, or a worker already running)`,
        `stop what holds it, or set ${variable} to a free port`,
      )
    : problem(
        check,
        'setup',
        `${what}: cannot listen on ${host}:${port} (${result.code})`,
        `set ${variable} to a port this user may use (above 1023) on an address of this machine`,
      );
}
