// Owns copying a method's metadata, name and length onto the wrapper that replaces it.
/**
 * Gives `wrapper` everything other decorators recorded on `original` (route, guards, pipes,
 * Swagger...) and its name and length, so decorators keep working in any order.
 */
export function copyMethodMetadata(original: object, wrapper: object): void {
  for (const key of Reflect.getOwnMetadataKeys(original)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapper);
  }
  for (const prop of ['name', 'length'] as const) {
    const descriptor = Object.getOwnPropertyDescriptor(original, prop);
    if (descriptor) Object.defineProperty(wrapper, prop, descriptor);
  }
}
