import type { SandboxCore } from './core.js';
import { requestKey } from './core.js';
import * as roster from './roster-ops.js';
import type { SandboxControl, SandboxEvents } from './types.js';

/** The in-process control API; the `/_sandbox/` routes call exactly these functions. */
export function createControl(core: SandboxCore): SandboxControl {
  const { school, events } = core;

  const billableUserId = (): number => {
    const ids = school.studentIds();
    const studentId = ids.length > 0 ? core.random.pick(ids) : undefined;
    return studentId === undefined ? 1 : school.studentRow(studentId).userId;
  };

  const control: SandboxControl = {
    createInvoice(fields = {}) {
      const invoice = core.invoices.create(fields, { now: core.now(), random: core.random, userId: billableUserId() });
      core.fire('invoice.created', invoice);
      return invoice;
    },
    updateInvoice(id, fields) {
      const invoice = core.invoices.update(id, fields, core.now());
      core.fire('invoice.updated', invoice);
      return invoice;
    },
    invoices: () => core.invoices.list(),
    forgetInvoice: (id) => core.invoices.forget(id),
    fireEvent: (event, object) => core.fire(event, object),
    createStudent: (input = {}) => roster.createStudent(school, input, core.now(), core.random),
    updateStudent: (id, patch) => roster.updateStudent(school, id, patch, core.now()),
    archiveStudent: (id) => roster.archiveStudent(school, id, core.now()),
    deleteStudent: (id) => roster.deleteStudent(school, id),
    updateUser: (id, patch) => roster.updateUser(school, id, patch, core.now()),
    archiveUser: (id) => roster.updateUser(school, id, { isArchived: 1 }, core.now()),
    deleteUser: (id) => roster.deleteUser(school, id),
    students: () => school.students(),
    student: (id) => school.student(id),
    users: () => school.users(),
    groups: () => core.groups.list(),
    createGroup: (fields = {}) => core.groups.create(fields, core.now()),
    updateGroup: (id, patch) => core.groups.update(id, patch, core.now()),
    deleteGroup: (id) => core.groups.remove(id),
    webhooks: () => core.webhooks.list(),
    injectFault: (fault) => core.faults.add(fault),
    clearFaults: () => core.faults.clear(),
    faults: () => core.faults.list(),
    issueToken: (ttlSeconds) => core.tokens.issue(ttlSeconds),
    revokeTokens: () => core.tokens.revokeAll(),
    expireTokens: () => core.tokens.expireAll(),
    deliveryLog: () => core.deliverer.log(),
    flushDeliveries: () => core.deliverer.flush(),
    idle: () => core.deliverer.idle(),
    requestCount: (method, path) => core.requestCounts.get(requestKey(method, path)) ?? 0,
    on(event, listener) {
      events.on(event, listener);
      return () => events.off(event, listener);
    },
    off(event, listener) {
      events.off(event, listener);
    },
    waitFor(event, predicate) {
      type Value = Parameters<SandboxEvents[typeof event]>[0];
      return new Promise<Value>((resolve) => {
        const listener = (value: Value): void => {
          if (predicate && !predicate(value)) return;
          events.off(event, listener);
          resolve(value);
        };
        events.on(event, listener);
      });
    },
  };
  return control;
}
