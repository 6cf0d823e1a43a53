/** What a store option was given instead of what it needs, for its configuration error (never the value). */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== 'object') return `a ${typeof value}`;
  const name = (value as object).constructor?.name;
  return name && name !== 'Object' ? `an instance of ${name}` : 'a plain object';
}
