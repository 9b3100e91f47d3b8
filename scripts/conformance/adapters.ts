/**
 * One small adapter document per scenario, written from the convention's template in `test/conformance/` with the
 * scenario's create path (and any headers it requires) filled in, exactly what a user copying a template does.
 * The writing itself (`writeAdapterDocuments`) serves the aws-json suite too.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument, type Document } from 'yaml';
import type { Scenario } from './scenarios';

/** Where the templates are. */
export const TEMPLATES_DIR = path.resolve(__dirname, '..', '..', 'test', 'conformance');

/** The provider name of a scenario's adapter: `azure-<scenario in kebab case>`, at most 64 characters. */
export function providerNameOf(scenario: Scenario): string {
  const kebab = scenario.name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
  return `azure-${kebab}`.slice(0, 64);
}

/**
 * Writes one adapter document per scenario into `dir` as `<name>.yaml`: the YAML file `sourceOf(scenario)` (each
 * file read once), named `nameOf(scenario)` and changed by `edit`; returns the registry entries (`{ name, path }`).
 */
export async function writeAdapterDocuments<S>(
  scenarios: readonly S[],
  dir: string,
  how: { sourceOf(scenario: S): string; nameOf(scenario: S): string; edit(document: Document, scenario: S): void },
): Promise<{ name: string; path: string }[]> {
  await mkdir(dir, { recursive: true });
  const sources = new Map<string, string>();
  const entries: { name: string; path: string }[] = [];
  for (const scenario of scenarios) {
    const source = how.sourceOf(scenario);
    let text = sources.get(source);
    if (text === undefined) {
      text = await readFile(source, 'utf8');
      sources.set(source, text);
    }
    const document = parseDocument(text);
    const name = how.nameOf(scenario);
    document.set('name', name);
    how.edit(document, scenario);
    const file = path.join(dir, `${name}.yaml`);
    await writeFile(file, document.toString());
    entries.push({ name, path: file });
  }
  return entries;
}

/** Writes each scenario's adapter into `dir`; returns the registry entries (`{ name, path }`). */
export function writeScenarioAdapters(
  scenarios: readonly Scenario[],
  dir: string,
): Promise<{ name: string; path: string }[]> {
  return writeAdapterDocuments(scenarios, dir, {
    sourceOf: (scenario) => path.join(TEMPLATES_DIR, `${scenario.convention}.yaml`),
    nameOf: providerNameOf,
    edit: (document, scenario) => {
      document.set(
        'description',
        `${scenario.name}: ${scenario.method} ${scenario.route} (from ${scenario.convention}.yaml)`,
      );
      document.setIn(['create', 'path'], scenario.route);
      if (document.getIn(['create', 'method']) !== scenario.method) {
        throw new Error(
          `scenario ${scenario.name} is a ${scenario.method}, but ${scenario.convention}.yaml creates with ${String(document.getIn(['create', 'method']))}`,
        );
      }
      for (const [header, value] of Object.entries(scenario.headers ?? {}))
        document.setIn(['headers', header], document.createNode({ value }));
    },
  });
}
