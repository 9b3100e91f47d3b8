/**
 * `npm start`'s settings: every listener the demo opens has a documented variable, unset (or 0) means a free port
 * it prints, and a bad value is refused naming its variable, every problem at once.
 */
import { describe, expect, it } from 'vitest';
import { DEMO_VARIABLES, demoSettings } from '../../src/dev/demo-settings';
import { environmentVariables } from '../../src/doctor/settings';

describe("npm start's settings", () => {
  it('defaults: the dev server on 7233 and its Web UI on 8233, free ports for the rest, .asyncjob in the project', () => {
    expect(demoSettings({}, '/project', '/elsewhere')).toEqual({
      temporalPort: 7233,
      uiPort: 8233,
      temporalHttpPort: undefined,
      temporalMetricsPort: undefined,
      simulatorPort: undefined,
      webhookPort: undefined,
      dataDir: '/project/.asyncjob',
    });
  });

  it('each variable places its listener; 0 is a free port; a relative data directory is taken from where it runs', () => {
    const settings = demoSettings(
      {
        ASYNCJOB_TEMPORAL_PORT: '17233',
        ASYNCJOB_UI_PORT: '18233',
        ASYNCJOB_TEMPORAL_HTTP_PORT: '17243',
        ASYNCJOB_TEMPORAL_METRICS_PORT: '0',
        ASYNCJOB_DEMO_SIMULATOR_PORT: '18080',
        ASYNCJOB_DEMO_WEBHOOK_PORT: '',
        ASYNCJOB_DEMO_DATA_DIR: 'demo-data',
      },
      '/project',
      '/work',
    );
    expect(settings).toEqual({
      temporalPort: 17233,
      uiPort: 18233,
      temporalHttpPort: 17243,
      temporalMetricsPort: undefined,
      simulatorPort: 18080,
      webhookPort: undefined,
      dataDir: '/work/demo-data',
    });
  });

  it('refuses bad values naming every variable at once', () => {
    expect(() =>
      demoSettings({ ASYNCJOB_TEMPORAL_HTTP_PORT: 'http', ASYNCJOB_DEMO_WEBHOOK_PORT: '70000' }, '/p', '/p'),
    ).toThrow(/ASYNCJOB_TEMPORAL_HTTP_PORT: [^\n]+\n\s+- ASYNCJOB_DEMO_WEBHOOK_PORT: /);
  });

  it('every variable is in the configuration reference (docs/configuration.md)', () => {
    const documented = environmentVariables();
    expect(Object.values(DEMO_VARIABLES).filter((name) => !documented.includes(name))).toEqual([]);
  });
});
