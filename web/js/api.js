// The one way the pages talk to the REST API: JSON in and out, the CSRF header on every
// unsafe request (the session itself rides in an HttpOnly cookie), errors as ApiError.

const PREFIX = "/api/v1";
let csrf = "";
const ended = new Set();

export class ApiError extends Error {
  constructor(status, error) {
    super(error.message || `the server answered ${status}`);
    this.status = status;
    this.code = error.code || "ERROR";
    this.details = error.details || {};
  }

  /** Validation problems [{code, path, message}], when the server reported any. */
  get problems() {
    return this.details.problems || [];
  }
}

export function setCsrf(token) {
  csrf = token || "";
}

export function getCsrf() {
  return csrf;
}

/** Called with the error when a request finds the session gone (expired, logged out elsewhere). */
export function onSessionEnded(listener) {
  ended.add(listener);
}

export async function request(method, path, body) {
  return send(method, path, body === undefined ? undefined : JSON.stringify(body), "application/json");
}

/** A request whose body is sent as it is (text of `contentType`), e.g. a CSV file's. */
export async function send(method, path, text, contentType) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-CSRF-Token"] = csrf;
  if (text !== undefined) headers["Content-Type"] = contentType;
  const response = await fetch(PREFIX + path, {
    method, headers, credentials: "same-origin", body: text,
  });
  const data = response.status === 204 ? {} : await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new ApiError(response.status, data.error || {});
    if (response.status === 401 && !path.startsWith("/auth/login")) ended.forEach((f) => f(error));
    throw error;
  }
  return data;
}

/** A path segment: names are user-chosen, so they are always encoded. */
export const seg = encodeURIComponent;

export const get = (path) => request("GET", path);
export const post = (path, body) => request("POST", path, body);
export const put = (path, body) => request("PUT", path, body);
export const patch = (path, body) => request("PATCH", path, body);
export const del = (path) => request("DELETE", path);
