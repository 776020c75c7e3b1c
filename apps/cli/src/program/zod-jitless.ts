// Importing this module sets zod up for the CLI; required (not imported) where zod is first needed, so that what a plain
// `chopin status` loads never includes zod (docs/install.md § Start-up time). The bundler gives a required module of
// ours a chunk of its own, loaded when the require runs; `require("zod")` itself would be copied into the caller's chunk.
import { config } from "zod";

// zod compiles a parser (new Function) for each object schema on its first parse: worth it in a long run, not in a
// command that parses a few objects once (~5 ms of `chopin status`). Same results.
config({ jitless: true });
