// The kept ETags are bounded: the least recently used goes first, so a busy server's memory stays flat.
import { expect, test } from "bun:test";
import { ETags } from "./etags";

test("at most maxEntries are kept; reading one keeps it longest", () => {
	const etags = new ETags(2);
	etags.set("a", { etag: 'W/"1"', value: 1 });
	etags.set("b", { etag: 'W/"2"', value: 2 });
	expect(etags.get("a")?.value).toBe(1);
	etags.set("c", { etag: 'W/"3"', value: 3 });
	expect(etags.get("b")).toBeUndefined();
	expect([etags.get("a")?.value, etags.get("c")?.value, etags.size]).toEqual([1, 3, 2]);
	etags.delete("a");
	expect(etags.size).toBe(1);
});
