// What this session may do, asked once (GET /auth/capabilities) instead of trying routes: a
// tried route that refuses leaves a denial in the audit log, for every user who may not use it.
// Operations the system alone decides are answered (administration, ADD), and those on one
// object when it is named; the server decides everything again when it is asked to act.
import * as api from "./api.js";

/** -> may(operation): whether the session may run a policy-table operation, e.g. "users.index";
 * given an object ({type, name}), the operations on it too ("streams.delete"). */
export async function capabilities(object) {
  const where = object ? `/${api.seg(object.type)}/${api.seg(object.name)}` : "";
  const { operations } = await api.get(`/auth/capabilities${where}`);
  return (operation) => operations[operation] === true;
}
