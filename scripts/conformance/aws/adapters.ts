/**
 * One adapter document per scenario, written from the AWS documents in `examples/providers/` exactly as a user
 * pointing one at another endpoint would: a name, the endpoint (the scenario's fault proxy in front of moto), and
 * the credentials profile. Nothing else of the example is changed.
 */
import path from 'node:path';
import { writeAdapterDocuments } from '../adapters';
import type { AwsScenario } from './scenarios';

/** Where the AWS example documents are. */
export const EXAMPLES_DIR = path.resolve(__dirname, '..', '..', '..', 'examples', 'providers');

/** The credentials profile moto knows the key of, and one whose secret is wrong. */
export const PROFILES = { signing: 'conformance', wrongSecret: 'wrong-secret' } as const;

/** The provider name of a scenario's adapter: `aws-<scenario in kebab case>`. */
export function awsProviderNameOf(scenario: AwsScenario): string {
  return `aws-${scenario.name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()}`.slice(0, 64);
}

/** Writes each scenario's adapter into `dir`, pointed at its proxy (`endpoints[name]`); returns the registry entries. */
export function writeAwsAdapters(
  scenarios: readonly AwsScenario[],
  endpoints: Readonly<Record<string, string>>,
  dir: string,
): Promise<{ name: string; path: string }[]> {
  return writeAdapterDocuments(scenarios, dir, {
    sourceOf: (scenario) => path.join(EXAMPLES_DIR, `${scenario.document}.yaml`),
    nameOf: awsProviderNameOf,
    edit: (document, scenario) => {
      const endpoint = endpoints[scenario.name];
      if (endpoint === undefined) throw new Error(`no endpoint for scenario ${scenario.name}`);
      document.set('description', `${scenario.name}: ${scenario.proves} (from ${scenario.document}.yaml)`);
      document.set('baseUrl', endpoint);
      document.setIn(['credential', 'profile'], scenario.wrongSecret ? PROFILES.wrongSecret : PROFILES.signing);
    },
  });
}
