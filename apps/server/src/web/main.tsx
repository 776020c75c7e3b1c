// The pages' entry: finds the page for this path (page-routes.ts) and shows its component.
import { createRoot } from "react-dom/client";
import { App } from "./app";

createRoot(document.getElementById("root")!).render(<App />);
