/// Issuing-state and nationality codes of Doc 9303 part 3: ISO 3166-1 alpha-3, plus the codes ICAO adds.
public enum MRZCountryCodes {
    /// Codes that are not plain ISO 3166-1 countries, with what they mean.
    public static let special: [String: String] = [
        "D": "Germany (ICAO uses D, not DEU)",
        "UTO": "Utopia (fictional state of the Doc 9303 specimens)",
        "XXA": "Stateless person (1954 Convention)",
        "XXB": "Refugee (1951 Convention)",
        "XXC": "Refugee (other than the 1951 Convention)",
        "XXX": "Person of unspecified nationality",
        "GBD": "British Overseas Territories Citizen",
        "GBN": "British National (Overseas)",
        "GBO": "British Overseas Citizen",
        "GBP": "British Protected Person",
        "GBS": "British Subject",
        "UNO": "United Nations Organization official",
        "UNA": "United Nations specialized agency official",
        "UNK": "Resident of Kosovo (UN interim administration)",
        "EUE": "European Union",
        "XOM": "Sovereign Military Order of Malta",
        "XPO": "INTERPOL",
        "XCC": "Caribbean Community",
        "XES": "Organisation of Eastern Caribbean States",
        "XEC": "Economic Community of West African States",
        "XIM": "African Export-Import Bank",
        "XDC": "Southern African Development Community",
        "XBA": "African Development Bank",
        "XCO": "Common Market for Eastern and Southern Africa",
    ]

    /// ISO 3166-1 alpha-3 codes.
    public static let iso: Set<String> = Set(
        """
        ABW AFG AGO AIA ALA ALB AND ARE ARG ARM ASM ATA ATF ATG AUS AUT AZE BDI BEL BEN BES BFA BGD BGR BHR BHS BIH
        BLM BLR BLZ BMU BOL BRA BRB BRN BTN BVT BWA CAF CAN CCK CHE CHL CHN CIV CMR COD COG COK COL COM CPV CRI CUB
        CUW CXR CYM CYP CZE DEU DJI DMA DNK DOM DZA ECU EGY ERI ESH ESP EST ETH FIN FJI FLK FRA FRO FSM GAB GBR GEO
        GGY GHA GIB GIN GLP GMB GNB GNQ GRC GRD GRL GTM GUF GUM GUY HKG HMD HND HRV HTI HUN IDN IMN IND IOT IRL IRN
        IRQ ISL ISR ITA JAM JEY JOR JPN KAZ KEN KGZ KHM KIR KNA KOR KWT LAO LBN LBR LBY LCA LIE LKA LSO LTU LUX LVA
        MAC MAF MAR MCO MDA MDG MDV MEX MHL MKD MLI MLT MMR MNE MNG MNP MOZ MRT MSR MTQ MUS MWI MYS MYT NAM NCL NER
        NFK NGA NIC NIU NLD NOR NPL NRU NZL OMN PAK PAN PCN PER PHL PLW PNG POL PRI PRK PRT PRY PSE PYF QAT REU ROU
        RUS RWA SAU SDN SEN SGP SGS SHN SJM SLB SLE SLV SMR SOM SPM SRB SSD STP SUR SVK SVN SWE SWZ SXM SYC SYR TCA
        TCD TGO THA TJK TKL TKM TLS TON TTO TUN TUR TUV TWN TZA UGA UKR UMI URY USA UZB VAT VCT VEN VGB VIR VNM VUT
        WLF WSM YEM ZAF ZMB ZWE
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))

    /// The ISO 3166-1 code for an MRZ code: `D` becomes `DEU`; every other code is returned as it is.
    public static func isoCode(for code: String) -> String { code == "D" ? "DEU" : code }

    /// Whether `code` (fillers already removed) is an ISO or ICAO code.
    public static func isKnown(_ code: String) -> Bool { iso.contains(code) || special[code] != nil }
}
