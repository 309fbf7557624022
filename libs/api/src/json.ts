/** A decoded JSON object (not null, not an array): the guard every reader of wire data starts with. */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
