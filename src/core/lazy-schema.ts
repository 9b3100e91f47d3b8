/**
 * A zod schema built on first use. Temporal evaluates a workflow's imports anew for every workflow it keeps in
 * its cache (workflows are isolated from each other), so schemas built when a module loads cost each cached
 * workflow their whole heap (~1.7 MiB for `src/core`) even when the workflow never parses with them; the worker's
 * memory then grows with its cache (bench/README.md). Built on first use, a workflow pays only for the few it uses
 * (its input and messages), and activities, which parse records, build each once per worker.
 *
 * The value behaves as the schema itself (same type, same methods), so definitions and call sites do not change.
 */
export function lazySchema<T extends object>(build: () => T): T {
  let built: T | undefined;
  const schema = (): T => (built ??= build());
  return new Proxy({} as T, {
    get: (_target, key) => {
      const s = schema();
      return Reflect.get(s, key, s) as unknown;
    },
    set: (_target, key, value) => Reflect.set(schema(), key, value),
    has: (_target, key) => Reflect.has(schema(), key),
    ownKeys: () => Reflect.ownKeys(schema()),
    getPrototypeOf: () => Reflect.getPrototypeOf(schema()),
    defineProperty: (_target, key, descriptor) => Reflect.defineProperty(schema(), key, descriptor),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(schema(), key);
      // A proxy may not report a property as non-configurable unless its own target has it so.
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
  });
}
