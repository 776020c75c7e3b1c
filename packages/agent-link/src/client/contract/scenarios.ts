/** Every contract scenario by name, as the Bun and Node.js runners look them up. */
import type { Scenario } from "./scenario";
import { connectScenario } from "./scenario-connect";
import { restartScenario, resumeScenario } from "./scenario-resume";
import { serveScenario } from "./scenario-serve";

export const SCENARIOS = {
	connect: connectScenario,
	serve: serveScenario,
	resume: resumeScenario,
	restart: restartScenario,
} satisfies Record<string, Scenario>;

export type ScenarioName = keyof typeof SCENARIOS;
