/// The data element ids of the AAMVA DL/ID card design standard (Annex D) that this reader names.
public enum AAMVAElementIDs {
    /// Element id → meaning.
    public static let names: [String: String] = [
        "DAA": "Full name (v1)", "DAB": "Family name (v1)", "DAC": "First name", "DAD": "Middle name(s)",
        "DAE": "Name suffix (v1)", "DAF": "Name prefix (v1)", "DAG": "Address street 1", "DAH": "Address street 2",
        "DAI": "Address city", "DAJ": "Address jurisdiction code", "DAK": "Address postal code",
        "DAQ": "Customer ID number", "DAR": "Licence classification (v1)", "DAS": "Restrictions (v1)",
        "DAT": "Endorsements (v1)", "DAU": "Height", "DAV": "Height in cm (v1)", "DAW": "Weight (lb)",
        "DAX": "Weight (kg)", "DAY": "Eye colour", "DAZ": "Hair colour", "DBA": "Document expiration date",
        "DBB": "Date of birth", "DBC": "Sex", "DBD": "Document issue date", "DBN": "Alias family name",
        "DBG": "Alias given name", "DBS": "Alias suffix", "DCA": "Jurisdiction vehicle class",
        "DCB": "Jurisdiction restriction codes", "DCD": "Jurisdiction endorsement codes",
        "DCE": "Weight range", "DCF": "Document discriminator", "DCG": "Country identification",
        "DCI": "Place of birth", "DCJ": "Audit information", "DCK": "Inventory control number",
        "DCL": "Race / ethnicity", "DCS": "Family name", "DCT": "Given names (v2)", "DCU": "Name suffix",
        "DDA": "Compliance type", "DDB": "Card revision date", "DDC": "HAZMAT endorsement expiration date",
        "DDD": "Limited duration document indicator", "DDE": "Family name truncation",
        "DDF": "First name truncation", "DDG": "Middle name truncation", "DDH": "Under 18 until",
        "DDI": "Under 19 until", "DDJ": "Under 21 until", "DDK": "Organ donor indicator",
        "DDL": "Veteran indicator",
    ]

    /// Date elements (read in the issuer's date order).
    public static let dates: Set<String> = ["DBA", "DBB", "DBD", "DDB", "DDC", "DDH", "DDI", "DDJ"]

    /// Mandatory in the DL subfile of AAMVA versions 4–10 (the ID subfile leaves out DCA, DCB, DCD).
    public static let mandatoryV4: [String] = [
        "DCA", "DCB", "DCD", "DBA", "DCS", "DAC", "DAD", "DBD", "DBB", "DBC", "DAY", "DAU", "DAG", "DAI", "DAJ",
        "DAK", "DAQ", "DCF", "DCG", "DDE", "DDF", "DDG",
    ]
    /// The core every version carries (names are checked separately because v1–v3 spell them differently).
    public static let mandatoryCore: [String] = ["DAQ", "DBB", "DBA", "DAG", "DAI", "DAJ", "DAK"]
}
