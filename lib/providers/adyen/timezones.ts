// The abbreviations Adyen writes in its reports' TimeZone column, as UTC offsets.
// An abbreviation names an offset, not a place (BST is summer time in London, CEST in
// Amsterdam), so the offset is fixed and no daylight rule is needed. Ambiguous ones
// are read as Adyen's own reports use them: CST, CDT, EST, EDT as North American
// zones (Adyen's US accounts), IST as India. Anything else is refused, naming it.
const OFFSETS: Readonly<Record<string, string>> = {
  UTC: "Z",
  GMT: "Z",
  WET: "Z",
  BST: "+01:00",
  WEST: "+01:00",
  CET: "+01:00",
  IST: "+05:30",
  CEST: "+02:00",
  EET: "+02:00",
  SAST: "+02:00",
  EEST: "+03:00",
  MSK: "+03:00",
  GST: "+04:00",
  SGT: "+08:00",
  HKT: "+08:00",
  AWST: "+08:00",
  JST: "+09:00",
  KST: "+09:00",
  AEST: "+10:00",
  AEDT: "+11:00",
  NZST: "+12:00",
  NZDT: "+13:00",
  BRT: "-03:00",
  AST: "-04:00",
  EDT: "-04:00",
  EST: "-05:00",
  CDT: "-05:00",
  CST: "-06:00",
  MDT: "-06:00",
  MST: "-07:00",
  PDT: "-07:00",
  PST: "-08:00",
};

/** "BST" → "+01:00"; an explicit offset ("+05:30", "-0800") is taken as it is; null when unknown. */
export function adyenZoneOffset(zone: string): string | null {
  const known = OFFSETS[zone.toUpperCase()];
  if (known) return known;
  return /^[+-]\d{2}:?\d{2}$/.test(zone) ? zone : null;
}

export const knownAdyenZones = () => Object.keys(OFFSETS).join(", ");
