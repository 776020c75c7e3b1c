/**
 * The optional features of chopin.agent.v1 and the Chopin-Agent-Features header that asks for
 * them. A feature changes what may cross the wire, so parse and encode take the negotiated set.
 */
import { z } from "zod";

export const FEATURES = [
	"run-stage-deltas",
	"decision-option-previews",
	"resumable-sessions",
	"restart-notice",
	"capability-catalog",
	"attachments",
	"session-forks",
	"steer-turn",
	"retry-turn",
] as const;

export const featureSchema = z.enum(FEATURES);
export type Feature = z.infer<typeof featureSchema>;

/** Header of the upgrade request naming the features a client wants. */
export const FEATURES_HEADER = "Chopin-Agent-Features";

const known: ReadonlySet<string> = new Set(FEATURES);

export function isFeature(name: string): name is Feature {
	return known.has(name);
}

/**
 * Reads a Chopin-Agent-Features value: comma-separated, each name trimmed; empty entries and
 * names this package does not know are ignored (as the server must), repeats kept once.
 * Names are case-sensitive, as the spec spells them.
 */
export function parseFeaturesHeader(value: string | null | undefined): Feature[] {
	if (!value) return [];
	const out: Feature[] = [];
	for (const entry of value.split(",")) {
		const name = entry.trim();
		if (isFeature(name) && !out.includes(name)) out.push(name);
	}
	return out;
}

/** Writes a Chopin-Agent-Features value: the names once each, in the order given. */
export function formatFeaturesHeader(features: Iterable<Feature>): string {
	return [...new Set(features)].join(", ");
}

/**
 * What a client may use after attached: the features it asked for that attached.features lists.
 * attached without features (a server from before them) grants none.
 */
export function grantedFeatures(
	requested: Iterable<Feature>,
	attachedFeatures?: readonly string[],
): Set<Feature> {
	const listed = new Set(attachedFeatures ?? []);
	return new Set([...requested].filter((feature) => listed.has(feature)));
}

/** The negotiated set, as parse and encode accept it. */
export type FeatureSet = ReadonlySet<Feature> | readonly Feature[];

export function toFeatureSet(features: FeatureSet | undefined): ReadonlySet<Feature> {
	if (!features) return new Set();
	return features instanceof Set ? features : new Set(features as readonly Feature[]);
}
