/**
 * What Temporal's own databases hold, searched byte for byte: every bytea, text and JSON column of every table of
 * the persistence and visibility databases, for a string. With payloads encrypted, a string from the requests'
 * payloads must be in none of them; the run's task queue name (written in plain text in every history) must be
 * found, or the search could not see what it looks for.
 */
import { Client as PgClient } from 'pg';

/** The databases of scripts/cluster.sh's server (docker/temporal/server.yaml's defaults). */
const TEMPORAL_DATABASES = ['temporal', 'temporal_visibility'];

/** Where `needle` occurs: `database.table.column` with the number of rows, for every column holding it. */
async function occurrences(url: string, needle: string): Promise<string[]> {
  const client = new PgClient({ connectionString: url });
  await client.connect();
  try {
    const { rows: columns } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type IN ('bytea', 'text', 'character varying', 'jsonb', 'json')`,
    );
    const found: string[] = [];
    for (const column of columns) {
      const bytes =
        column.data_type === 'bytea' ? `"${column.column_name}"` : `convert_to("${column.column_name}"::text, 'UTF8')`;
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${column.table_name}" WHERE position(convert_to($1, 'UTF8') IN ${bytes}) > 0`,
        [needle],
      );
      if (Number(rows[0]!.n) > 0)
        found.push(`${client.database}.${column.table_name}.${column.column_name} (${rows[0]!.n} rows)`);
    }
    return found;
  } finally {
    await client.end();
  }
}

/**
 * Problems with the encryption of the payloads in Temporal's databases next to `storeUrl` (the asyncjob store's
 * URL on the same PostgreSQL): `secret` found anywhere, or `control` found nowhere.
 */
export async function payloadsEncryptedProblems(storeUrl: string, secret: string, control: string): Promise<string[]> {
  const problems: string[] = [];
  let controlFound = 0;
  for (const database of TEMPORAL_DATABASES) {
    const url = new URL(storeUrl);
    url.pathname = `/${database}`;
    const hits = await occurrences(url.toString(), secret);
    problems.push(...hits.map((hit) => `a payload's plain text is in Temporal's database: ${hit}`));
    controlFound += (await occurrences(url.toString(), control)).length;
  }
  if (controlFound === 0)
    problems.push(`the task queue's name is in no column of Temporal's databases: the search cannot see history bytes`);
  return problems;
}
