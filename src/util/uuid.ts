const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its usual text form (any case): what a path parameter must be before it is looked up. */
export const isUuid = (value: string) => UUID.test(value);
