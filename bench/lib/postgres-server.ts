/**
 * The local PostgreSQL server the store figure measures, as a process: its CPU is the measured system's, not
 * other work on the machine (run G's first attempt flagged the store phase as 26% "other work": PostgreSQL
 * itself filling and writing the million entries).
 */
import { readFileSync } from 'node:fs';
import { Client } from 'pg';

/**
 * The postmaster's PID of the server at `url` when it runs on this machine (the parent of the backend serving
 * this connection), or undefined when it does not (a remote server's work is not on this machine's CPU).
 */
export async function localPostgresqlPid(url: string): Promise<number | undefined> {
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const stat = readFileSync(`/proc/${rows[0]!.pid}/stat`, 'utf8');
    // After the command's closing parenthesis: state, then ppid.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}
