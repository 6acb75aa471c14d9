/**
 * The HTTP agent the local layers forward with (the SES events layer to the rate layer, a fault
 * proxy to what it fronts): connections on loopback, pooled. A new connection per request is a
 * TCP connect and close on each side, twice per SendEmail on npm start (about 12 % of npm start's
 * CPU in a profile of a 3,000-email soak); a pooled one is closed by the agent after LOOPBACK_IDLE_MS
 * unused, well before the upstream's own keep-alive timeout (Node's servers: 5 s; Jetty, DynamoDB
 * Local's: 30 s) could close it just as a request goes out ("socket hang up", which the send
 * function would rightly take for an SES answer lost).
 */
import { Agent } from 'node:http';

/** How long a pooled connection may stay unused before the agent closes it. */
export const LOOPBACK_IDLE_MS = 1000;

/** A keep-alive agent whose unused connections close after LOOPBACK_IDLE_MS (Node applies `timeout` to them). */
export function loopbackAgent(): Agent {
  return new Agent({ keepAlive: true, timeout: LOOPBACK_IDLE_MS });
}
