/// AAMVA issuer identification numbers (IIN) and the jurisdictions they belong to (AAMVA's published IIN list).
public enum AAMVAJurisdictions {
    /// The issuer's country, which decides the date order.
    public enum Country: String, Sendable {
        case usa = "USA"
        case canada = "CAN"
        case mexico = "MEX"
    }

    /// IIN → (jurisdiction code, country).
    public static let byIIN: [String: (code: String, country: Country)] = {
        var table: [String: (String, Country)] = [:]
        let us =
            "636033 AL,636059 AK,604427 AS,636026 AZ,636021 AR,636014 CA,636020 CO,636006 CT,636011 DE,636043 DC,"
            + "636010 FL,636055 GA,636019 GU,636047 HI,636050 ID,636035 IL,636037 IN,636018 IA,636022 KS,636046 KY,"
            + "636007 LA,636041 ME,636003 MD,636002 MA,636032 MI,636038 MN,636051 MS,636030 MO,636008 MT,636054 NE,"
            + "636049 NV,636039 NH,636036 NJ,636009 NM,636001 NY,636004 NC,636034 ND,604430 MP,636023 OH,636058 OK,"
            + "636029 OR,636025 PA,604431 PR,636052 RI,636005 SC,636042 SD,636053 TN,636027 US,636015 TX,636062 VI,"
            + "636040 UT,636024 VT,636000 VA,636045 WA,636061 WV,636031 WI,636060 WY"
        let canada =
            "604432 AB,990876 AB,636028 BC,636048 MB,636017 NB,636016 NL,636013 NS,604433 NU,636012 ON,604426 PE,"
            + "604428 QC,636044 SK,604429 YT"
        let mexico = "636056 COA,636057 HID"
        for (list, country) in [(us, Country.usa), (canada, .canada), (mexico, .mexico)] {
            for entry in list.split(separator: ",") {
                let parts = entry.split(separator: " ")
                if parts.count == 2 { table[String(parts[0])] = (String(parts[1]), country) }
            }
        }
        return table
    }()

    /// Canadian province and territory codes (DAJ).
    public static let canadianCodes: Set<String> = [
        "AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU", "ON", "PE", "QC", "SK", "YT",
    ]
}
