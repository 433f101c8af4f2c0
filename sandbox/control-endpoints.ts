/**
 * The `/_sandbox/` control API, as one table: the routes are registered from it and the CLI's
 * `--help` and `GET /_sandbox` print it, so the documentation cannot drift from the code.
 */
export interface ControlEndpoint {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body: string | null;
  does: string;
}

export const CONTROL_ENDPOINTS: readonly ControlEndpoint[] = [
  { method: 'GET', path: '/_sandbox', body: null, does: 'this list' },
  { method: 'POST', path: '/_sandbox/invoices', body: '{ ...invoice fields, all optional; unknown ones pass through }', does: 'create an invoice, fire invoice.created' },
  { method: 'PATCH', path: '/_sandbox/invoices/:id', body: '{ ...fields to change }', does: 'update an invoice, fire invoice.updated' },
  { method: 'GET', path: '/_sandbox/invoices', body: null, does: 'invoices created so far' },
  { method: 'POST', path: '/_sandbox/events', body: '{ "event": "lesson.updated", "object": { ... } }', does: 'deliver any event to its registrations' },
  { method: 'GET', path: '/_sandbox/students', body: null, does: 'current students (list shape)' },
  { method: 'POST', path: '/_sandbox/students', body: '{ "firstName"?, "lastName"?, "email"?, "phone"?, "city"?, ... } (none: a realistic invented student)', does: 'create a student with its user and parent user' },
  { method: 'PATCH', path: '/_sandbox/students/:id', body: '{ "firstName"?, "lastName"?, "email"?, "phone"?, "mobile"?, "street"?, "zipCode"?, "city"?, "language"?, "isActive"?: 0|1, "isAdult"?: 0|1, "isArchived"?: 0|1 }', does: 'rename / edit a student, bumps updatedAt' },
  { method: 'POST', path: '/_sandbox/students/:id/archive', body: null, does: 'archive a student (isActive 0, user isArchived 1)' },
  { method: 'DELETE', path: '/_sandbox/students/:id', body: null, does: 'delete a student and its user (the parent stays)' },
  { method: 'GET', path: '/_sandbox/users', body: null, does: 'current users (list shape)' },
  { method: 'PATCH', path: '/_sandbox/users/:id', body: '{ "firstName"?, "lastName"?, "email"?, ..., "isArchived"?: 0|1 }', does: 'rename / edit a user' },
  { method: 'POST', path: '/_sandbox/users/:id/archive', body: null, does: 'archive a user' },
  { method: 'DELETE', path: '/_sandbox/users/:id', body: null, does: "delete a user (a student's user takes its student along)" },
  { method: 'GET', path: '/_sandbox/groups', body: null, does: 'current groups (list shape)' },
  { method: 'POST', path: '/_sandbox/groups', body: '{ "name"?, "teacherUserId"?: N|null }', does: 'create a group' },
  { method: 'PATCH', path: '/_sandbox/groups/:id', body: '{ "name"?, "teacherUserId"?: N|null }', does: 'rename a group or change its teacher, bumps updatedAt' },
  { method: 'DELETE', path: '/_sandbox/groups/:id', body: null, does: 'delete a group' },
  { method: 'GET', path: '/_sandbox/webhooks', body: null, does: 'live webhook registrations' },
  { method: 'POST', path: '/_sandbox/faults', body: '{ "kind": "latency"|"status"|"rateLimit"|"malformedJson"|"truncatedJson"|"reset"|"emptyList"|"body", "route"?: "GET /api/v2/students", "times"?: N|"always", "ms"?, "status"?, "retryAfterSeconds"?, "message"?, "body"? }', does: 'inject a fault into the next N API requests (default 1)' },
  { method: 'GET', path: '/_sandbox/faults', body: null, does: 'pending faults' },
  { method: 'DELETE', path: '/_sandbox/faults', body: null, does: 'clear all faults' },
  { method: 'POST', path: '/_sandbox/tokens', body: '{ "ttlSeconds"?: N }', does: 'issue a token without credentials' },
  { method: 'POST', path: '/_sandbox/tokens/revoke', body: null, does: 'revoke every token (static one included): they get 401' },
  { method: 'POST', path: '/_sandbox/tokens/expire', body: null, does: 'expire every issued token now: they get 401' },
  { method: 'GET', path: '/_sandbox/deliveries', body: null, does: 'delivery log: every attempt with its status or error' },
  { method: 'POST', path: '/_sandbox/deliveries/flush', body: null, does: 'retry every waiting delivery now' },
  { method: 'GET', path: '/_sandbox/requests', body: null, does: 'API request counts by "METHOD /route" (its path, or its pattern: /_sandbox/invoices/:id; "(no route)" for the rest)' },
];

export function describeControlEndpoints(): string {
  return CONTROL_ENDPOINTS.map((endpoint) => {
    const head = `  ${endpoint.method.padEnd(6)} ${endpoint.path}`;
    const body = endpoint.body ? `\n           body: ${endpoint.body}` : '';
    return `${head}\n           ${endpoint.does}${body}`;
  }).join('\n');
}
