// The server's version, from its package.json: reported by /healthz and compared by clients.
import pkg from "../package.json";

export const VERSION: string = pkg.version;
