import { expect, test } from "bun:test";
import { matchPage } from "./page-routes";

test("paths find their page and parameters; anything else finds none", () => {
	expect(matchPage("/")?.route.page).toBe("documents");
	expect(matchPage("/sign-in")?.route.page).toBe("sign-in");
	expect(matchPage("/d/abc")).toMatchObject({ route: { page: "document" }, params: { id: "abc" } });
	expect(matchPage("/pair/prg_abc")).toMatchObject({ route: { page: "pairing" }, params: { id: "prg_abc" } });
	expect(matchPage("/machines")?.route.page).toBe("machines");
	expect(matchPage("/machines/")?.route.page).toBe("machines");
	expect(matchPage("/d/")).toBeNull();
	expect(matchPage("/pair/")).toBeNull();
	expect(matchPage("/d/a/b")).toBeNull();
	expect(matchPage("/nope")).toBeNull();
	expect(matchPage("/d/%E0%A4%A")).toBeNull();
});
