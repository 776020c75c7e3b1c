// pino behind a module of our own, for log.ts to require on its first line. The bundler copies a required package into
// the requiring chunk (parsed by every command), but gives a required module of ours a chunk of its own, loaded only
// when the require runs (docs/install.md § Start-up time).
export { default as pino } from "pino";
