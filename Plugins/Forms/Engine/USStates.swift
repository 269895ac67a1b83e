import Foundation

/// The 50 US states and the District of Columbia: two-letter USPS code → name.
public enum USStates {
    public static let names: [String: String] = [
        "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California", "CO": "Colorado",
        "CT": "Connecticut", "DE": "Delaware", "DC": "District of Columbia", "FL": "Florida", "GA": "Georgia",
        "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana", "IA": "Iowa", "KS": "Kansas",
        "KY": "Kentucky", "LA": "Louisiana", "ME": "Maine", "MD": "Maryland", "MA": "Massachusetts",
        "MI": "Michigan", "MN": "Minnesota", "MS": "Mississippi", "MO": "Missouri", "MT": "Montana",
        "NE": "Nebraska", "NV": "Nevada", "NH": "New Hampshire", "NJ": "New Jersey", "NM": "New Mexico",
        "NY": "New York", "NC": "North Carolina", "ND": "North Dakota", "OH": "Ohio", "OK": "Oklahoma",
        "OR": "Oregon", "PA": "Pennsylvania", "RI": "Rhode Island", "SC": "South Carolina", "SD": "South Dakota",
        "TN": "Tennessee", "TX": "Texas", "UT": "Utah", "VT": "Vermont", "VA": "Virginia", "WA": "Washington",
        "WV": "West Virginia", "WI": "Wisconsin", "WY": "Wyoming",
    ]

    /// The names in Arabic and Spanish (the forms' other languages), by code.
    static let localNames: [String: (ar: String, es: String)] = [
        "AL": ("ألاباما", "Alabama"), "AK": ("ألاسكا", "Alaska"), "AZ": ("أريزونا", "Arizona"),
        "AR": ("أركنساس", "Arkansas"), "CA": ("كاليفورنيا", "California"), "CO": ("كولورادو", "Colorado"),
        "CT": ("كونيتيكت", "Connecticut"), "DE": ("ديلاوير", "Delaware"),
        "DC": ("مقاطعة كولومبيا", "Distrito de Columbia"),
        "FL": ("فلوريدا", "Florida"), "GA": ("جورجيا", "Georgia"), "HI": ("هاواي", "Hawái"), "ID": ("أيداهو", "Idaho"),
        "IL": ("إلينوي", "Illinois"), "IN": ("إنديانا", "Indiana"), "IA": ("آيوا", "Iowa"), "KS": ("كانساس", "Kansas"),
        "KY": ("كنتاكي", "Kentucky"), "LA": ("لويزيانا", "Luisiana"), "ME": ("مين", "Maine"),
        "MD": ("ماريلاند", "Maryland"), "MA": ("ماساتشوستس", "Massachusetts"), "MI": ("ميشيغان", "Míchigan"),
        "MN": ("مينيسوتا", "Minnesota"), "MS": ("ميسيسيبي", "Misisipi"), "MO": ("ميزوري", "Misuri"),
        "MT": ("مونتانا", "Montana"), "NE": ("نبراسكا", "Nebraska"), "NV": ("نيفادا", "Nevada"),
        "NH": ("نيوهامشير", "Nuevo Hampshire"), "NJ": ("نيوجيرسي", "Nueva Jersey"), "NM": ("نيومكسيكو", "Nuevo México"),
        "NY": ("نيويورك", "Nueva York"), "NC": ("كارولاينا الشمالية", "Carolina del Norte"),
        "ND": ("داكوتا الشمالية", "Dakota del Norte"), "OH": ("أوهايو", "Ohio"), "OK": ("أوكلاهوما", "Oklahoma"),
        "OR": ("أوريغون", "Oregón"), "PA": ("بنسلفانيا", "Pensilvania"), "RI": ("رود آيلاند", "Rhode Island"),
        "SC": ("كارولاينا الجنوبية", "Carolina del Sur"), "SD": ("داكوتا الجنوبية", "Dakota del Sur"),
        "TN": ("تينيسي", "Tennessee"), "TX": ("تكساس", "Texas"), "UT": ("يوتا", "Utah"), "VT": ("فيرمونت", "Vermont"),
        "VA": ("فيرجينيا", "Virginia"), "WA": ("واشنطن", "Washington"),
        "WV": ("فيرجينيا الغربية", "Virginia Occidental"),
        "WI": ("ويسكونسن", "Wisconsin"), "WY": ("وايومنغ", "Wyoming"),
    ]

    static let byKey: [String: String] = {
        var keys: [String: String] = [:]
        for (code, name) in names {
            keys[placeNameKey(name)] = code
            if let local = localNames[code] {
                keys[placeNameKey(local.ar)] = code
                keys[placeNameKey(local.es)] = code
            }
        }
        return keys
    }()

    /// The code for a code or a name in English, Arabic or Spanish, in any letter case and spacing (`ca`,
    /// `California`, `new  york`, `أوهايو`, `Nueva York`), or nil.
    public static func code(_ text: String) -> String? {
        let upper = text.trimmingCharacters(in: .whitespaces).uppercased()
        return names[upper] != nil ? upper : byKey[placeNameKey(text)]
    }

    /// The state's name in `language` (English for any other).
    public static func name(_ code: String, language: String) -> String? {
        switch language {
        case "ar": return localNames[code]?.ar
        case "es": return localNames[code]?.es
        default: return names[code]
        }
    }
}
