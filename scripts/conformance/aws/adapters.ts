/**
 * One adapter document per scenario, written from the AWS documents in `examples/providers/` exactly as a user
 * pointing one at another endpoint would: a name, the endpoint (the scenario's fault proxy in front of moto), and
 * the credentials profile. Nothing else of the example is changed.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import type { AwsDocument, AwsScenario } from './scenarios';

/** Where the AWS example documents are. */
export const EXAMPLES_DIR = path.resolve(__dirname, '..', '..', '..', 'examples', 'providers');

/** The credentials profile moto knows the key of, and one whose secret is wrong. */
export const PROFILES = { signing: 'conformance', wrongSecret: 'wrong-secret' } as const;

/** The provider name of a scenario's adapter: `aws-<scenario in kebab case>`. */
export function awsProviderNameOf(scenario: AwsScenario): string {
  return `aws-${scenario.name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()}`.slice(0, 64);
}

/** Writes each scenario's adapter into `dir`, pointed at its proxy (`endpoints[name]`); returns the registry entries. */
export async function writeAwsAdapters(
  scenarios: readonly AwsScenario[],
  endpoints: Readonly<Record<string, string>>,
  dir: string,
): Promise<{ name: string; path: string }[]> {
  await mkdir(dir, { recursive: true });
  const examples = new Map<AwsDocument, string>();
  const entries: { name: string; path: string }[] = [];
  for (const scenario of scenarios) {
    let example = examples.get(scenario.document);
    if (example === undefined) {
      example = await readFile(path.join(EXAMPLES_DIR, `${scenario.document}.yaml`), 'utf8');
      examples.set(scenario.document, example);
    }
    const document = parseDocument(example);
    const name = awsProviderNameOf(scenario);
    const endpoint = endpoints[scenario.name];
    if (endpoint === undefined) throw new Error(`no endpoint for scenario ${scenario.name}`);
    document.set('name', name);
    document.set('description', `${scenario.name}: ${scenario.proves} (from ${scenario.document}.yaml)`);
    document.set('baseUrl', endpoint);
    document.setIn(['credential', 'profile'], scenario.wrongSecret ? PROFILES.wrongSecret : PROFILES.signing);
    const file = path.join(dir, `${name}.yaml`);
    await writeFile(file, document.toString());
    entries.push({ name, path: file });
  }
  return entries;
}
