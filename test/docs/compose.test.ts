/**
 * docker-compose.yml runs the same Temporal server as scripts/cluster.sh: the official images at the version the
 * script builds, given docker/temporal/server.yaml and every variable it needs, the schemas applied by
 * docker/temporal/setup-schema.sh, and asyncjob's search attributes registered. No Docker needed: the file is read.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTES } from '../../src/core/search-attribute-names';

const ROOT = path.join(__dirname, '..', '..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

interface Service {
  image?: string;
  volumes?: string[];
  environment?: Record<string, string> | string[];
  command?: string | string[];
  depends_on?: Record<string, { condition: string }>;
}

const compose = parse(read('docker-compose.yml')) as { services: Record<string, Service> };

function service(name: string): Service {
  const found = compose.services[name];
  expect(found, `service ${name}`).toBeDefined();
  return found!;
}

/** The service's environment as a map, whichever of the two compose forms it uses. */
function environment(name: string): Record<string, string> {
  const env = service(name).environment ?? {};
  if (!Array.isArray(env)) return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
  return Object.fromEntries(env.map((entry) => [entry.split('=')[0]!, entry.slice(entry.indexOf('=') + 1)]));
}

/** Where the service mounts a file of the repository (short volume syntax `./source:target[:mode]`). */
function mountTarget(name: string, file: string): string | undefined {
  for (const volume of service(name).volumes ?? []) {
    const [source, target] = volume.split(':');
    if (source === `./${file}`) return target;
  }
  return undefined;
}

function command(name: string): string {
  const cmd = service(name).command ?? '';
  return Array.isArray(cmd) ? cmd.join(' ') : cmd;
}

/** The version scripts/cluster.sh builds the server at. */
function clusterVersion(): string {
  const version = /^VERSION=(\S+)$/m.exec(read('scripts/cluster.sh'))?.[1];
  expect(version, 'VERSION in scripts/cluster.sh').toBeDefined();
  return version!;
}

/** The variables server.yaml reads with `env "NAME"` where no `default "..." (env "NAME")` supplies a value. */
function variablesWithoutDefault(template: string): string[] {
  const reads = [...template.matchAll(/(default\s+"[^"]*"\s+\()?env\s+"(\w+)"/g)];
  expect(reads.length, 'server.yaml reads variables').toBeGreaterThan(0);
  return [...new Set(reads.filter((r) => r[1] === undefined).map((r) => r[2]!))];
}

describe('docker-compose.yml runs the server configuration of scripts/cluster.sh', () => {
  it('gives the server docker/temporal/server.yaml as its config file', () => {
    const target = mountTarget('temporal', 'docker/temporal/server.yaml');
    expect(target).toBeDefined();
    expect(environment('temporal').TEMPORAL_SERVER_CONFIG_FILE_PATH).toBe(target);
  });

  it('mounts the dynamic config where the server looks for it', () => {
    const target = mountTarget('temporal', 'docker/temporal-dynamicconfig.yaml');
    expect(target).toBeDefined();
    expect(environment('temporal').DYNAMIC_CONFIG_FILE_PATH).toBe(target);
  });

  it('uses the server and admin-tools images of the version scripts/cluster.sh builds', () => {
    const version = clusterVersion();
    expect(service('temporal').image).toBe(`temporalio/server:${version}`);
    const adminTools = Object.values(compose.services)
      .map((s) => s.image ?? '')
      .filter((image) => image.startsWith('temporalio/admin-tools:'));
    expect(adminTools.length).toBeGreaterThan(0);
    for (const image of adminTools) expect(image).toBe(`temporalio/admin-tools:${version}`);
  });

  it('applies the schemas with docker/temporal/setup-schema.sh before the server starts', () => {
    const target = mountTarget('temporal-schema', 'docker/temporal/setup-schema.sh');
    expect(target).toBeDefined();
    expect(command('temporal-schema').split(/\s+/)).toContain(target);
    expect(service('temporal').depends_on?.['temporal-schema']?.condition).toBe('service_completed_successfully');
  });

  it('registers exactly the search attributes asyncjob keeps, with their types', () => {
    const registered = Object.fromEntries(
      environment('temporal-setup')
        .SEARCH_ATTRIBUTES!.trim()
        .split(/\s+/)
        .map((pair) => pair.split('=') as [string, string]),
    );
    expect(registered).toEqual(SEARCH_ATTRIBUTES);
    // Compose turns `$$` into the `$` the shell expands.
    expect(command('temporal-setup')).toContain('$$SEARCH_ATTRIBUTES');
  });

  it('sets every variable server.yaml reads without a default', () => {
    const template = read('docker/temporal/server.yaml');
    expect(template, 'only sprig `env` reads are recognised').not.toContain('.Env.');
    const env = environment('temporal');
    const required = variablesWithoutDefault(template);
    expect(required.length).toBeGreaterThan(0);
    for (const name of required) expect(env, `temporal sets ${name}`).toHaveProperty(name);
  });

  it('binds the server on all interfaces, so the image entrypoint sets the broadcast address server.yaml reads', () => {
    // The entrypoint sets TEMPORAL_BROADCAST_ADDRESS to the container's IP only for a wildcard BIND_ON_IP.
    expect(environment('temporal').BIND_ON_IP).toBe('0.0.0.0');
    expect(read('docker/temporal/server.yaml')).toContain('env "TEMPORAL_BROADCAST_ADDRESS"');
  });

  it('starts the worker and the Web UI after the namespace and search attributes are registered', () => {
    for (const name of ['worker', 'temporal-ui']) {
      expect(service(name).depends_on?.['temporal-setup']?.condition, name).toBe('service_completed_successfully');
    }
  });
});
