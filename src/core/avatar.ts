/**
 * The default profile icon: the person's initials on a colour derived from
 * their id, as an SVG data URI, so every profile has an icon without uploads.
 */
const COLOURS = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"];

export function defaultIcon(personId: number, displayName: string): string {
  const initials =
    displayName
      .split(/[\s._'-]+/u)
      .filter((part) => part !== "")
      .slice(0, 2)
      .map((part) => [...part][0]?.toUpperCase() ?? "")
      .join("") || "?";
  const colour = COLOURS[personId % COLOURS.length];
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">` +
    `<rect width="64" height="64" rx="32" fill="${colour}"/>` +
    `<text x="32" y="41" font-family="sans-serif" font-size="26" fill="#fff" text-anchor="middle">${escapeXml(initials)}</text></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`;
}

const escapeXml = (text: string): string =>
  text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c] ?? c);
