/**
 * A zod schema built on first use, so a module of schemas costs nothing until one is parsed with: activities build
 * each once per worker, and the workflow bundle loads `src/core` once per worker thread (`workflow-bundle.ts`), so
 * workflows share the few schemas they parse with instead of each building them.
 *
 * The value behaves as the schema itself (same type, same methods), so definitions and call sites do not change.
 * It can be neither frozen nor made non-extensible: the worker freezes the modules its workflows share, walking
 * every object it can reach from their exports, and a frozen zod schema breaks (zod defines some of its properties
 * on first use). The proxy's target is a function, which that walk freezes without looking inside, and freezing it
 * throws, which the walk expects of objects it cannot freeze.
 */
export function lazySchema<T extends object>(build: () => T): T {
  let built: T | undefined;
  const schema = (): T => (built ??= build());
  const target = (() => undefined) as unknown as T;
  return new Proxy(target, {
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
    preventExtensions: () => false,
  });
}
