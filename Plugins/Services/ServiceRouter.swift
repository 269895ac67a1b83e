import AbsherData
import SanadChat

/// What a question asks about a service. None named → an overview.
public enum ServiceFacet: String, Sendable, CaseIterable {
    case fee
    /// The fine for being late (an expired document).
    case lateFine = "late_fine"
    case requirements
    case steps
    case eligibility
    /// When the subject's document expires (or a violation is due) and how many days remain.
    case expiry
    /// The channel or office.
    case place = "where"

    /// The words that ask for each facet (Arabic, Gulf dialect and English; see `TypedQuestion`).
    public var keywords: [String] {
        switch self {
        case .fee:
            return [
                "رسوم*", "رسم", "سعر*", "بكم", "كم سعر", "تكلف*", "يكلف*", "كلف*", "فلوس", "مبلغ*", "كم ادفع", "ببلاش",
                "مجان*", "كم علي", "اسدد*", "مجموع*", "fee*", "cost*", "price*", "how much", "free", "charge*", "owe",
                "total",
            ]
        case .lateFine:
            return [
                "غرام*", "تاخير*", "تاخر*", "متاخر*", "late", "fine", "penalt*", "overdue",
            ]
        case .requirements:
            return [
                "متطلبات*", "شروط*", "شرط", "احتاج*", "يحتاج*", "مطلوب*", "المطلوب", "اوراق*", "مستندات*", "وش يبون",
                "ايش يبون", "وش يبي", "ايش يبي", "وش يحتاج", "require*", "need*", "documents", "papers",
            ]
        case .steps:
            return [
                "كيف", "شلون", "طريق*", "خطوات", "اسوي", "وش اسوي", "ايش اسوي", "اجراءات", "how do", "how can",
                "how to",
                "steps", "process", "procedure*",
            ]
        case .eligibility:
            return [
                "يحق*", "احق*", "مؤهل*", "مين يقدر", "من يقدر", "من يستطيع", "من يمكنه", "مسموح", "who can", "who may",
                "eligib*", "entitled", "allowed",
            ]
        case .expiry:
            return [
                "متى", "ينتهي*", "تنتهي*", "انتهاء", "انتهت", "انتهى", "خلص*", "يخلص*", "تخلص*", "صلاحي*", "باقي",
                "كم يوم", "تاريخ*", "اخر موعد", "expir*", "when", "valid*", "days left", "due", "deadline",
            ]
        case .place:
            return [
                "وين", "فين", "اين", "مكان", "من وين", "مكتب*", "فرع*", "اونلاين", "where", "office", "branch",
                "online",
            ]
        }
    }

    /// The facets `question` asks about, in this enum's order; empty when it names none.
    public static func asked(in question: TypedQuestion) -> [ServiceFacet] {
        allCases.filter { question.mentions($0.keywords) }
    }
}

/// Whose service a question is about.
public enum ServiceSubject: Sendable, Equatable {
    case user
    case member(HouseholdMember)
    case vehicle(Vehicle)

    /// `self`, `dependent:dep-2`, `worker:w-1`, `vehicle:v-1` (the evaluation set's notation).
    public var code: String {
        switch self {
        case .user: return "self"
        case .member(let m): return "\(m.role.rawValue):\(m.id)"
        case .vehicle(let v): return "vehicle:\(v.id)"
        }
    }
}

/// A question resolved: the service, the facets asked (all answered), the subject, and how sure the router is.
public struct ServiceRoute: Sendable, Equatable {
    public var service: ServiceInfo
    public var facets: [ServiceFacet]
    public var subject: ServiceSubject
    public var score: Double
}

/// The keyword router: the service whose subject words the question names (longer keywords count more, its action
/// words add 1, a facet 0.5, a named person or vehicle the service applies to 0.75; the first in the file wins a
/// tie),
/// the facets it asks for, and whose service it is.
public struct ServiceRouter: Sendable {
    public let catalog: ServiceCatalog
    public let userData: UserData

    public init(catalog: ServiceCatalog, userData: UserData) {
        self.catalog = catalog
        self.userData = userData
    }

    /// Words that name a worker by what they do; a worker whose relationship (`سائقك`, `your driver`) matches a
    /// group's words is meant by any of them.
    static let workerGroups = [
        ["سواق*", "سايق*", "driver*"], ["شغال*", "خادم*", "عامله منزليه", "maid*", "housemaid*"],
    ]
    /// Words that name a worker without saying which (the first worker is meant).
    static let workerWords = ["عامل", "العامل", "عمال*", "عاملي", "worker*"]
    /// Other words for a relationship stem (`ابني` for `ولد`), exact so that `ابنتي` does not match `ابن`.
    static let relationshipSynonyms = ["ولد": ["ابني", "ابنه"], "بنت": ["ابنتي", "ابنته"]]
    /// Words that name the user's own vehicle (`a car` names none).
    static let vehicleWords = ["سيارتي", "سيارتنا", "مركبتي", "my car", "my vehicle", "our car"]

    /// The subject word score of `service`: 2 for a keyword, a quarter more per extra word; 0 when none matches or
    /// one of its excluded words does.
    func subjectScore(_ service: ServiceInfo, _ q: TypedQuestion) -> Double {
        if q.mentions(service.excludedKeywords) { return 0 }
        let matched = service.keywords.filter { q.mentions($0) }
        guard let longest = matched.map({ $0.split(separator: " ").count }).max() else { return 0 }
        return 2 + 0.25 * Double(longest - 1)
    }

    /// The person or vehicle `q` names: a household member by name or relationship (`بنتي` for `بنتك`), a worker
    /// by a word like `السواق`, the vehicle by `سيارتي`, its make or plate; else the user.
    public func subject(of q: TypedQuestion) -> ServiceSubject { subjectMatch(of: q).subject }

    /// The subject, and whether only a general word (`عامل`, `worker`) named it.
    func subjectMatch(of q: TypedQuestion) -> (subject: ServiceSubject, general: Bool) {
        for m in userData.household {
            let names = [m.name, m.english["name"]].compactMap { $0 }
            let stem = relationshipStem(m.relationship)
            let rel =
                [stem + "*"] + (Self.relationshipSynonyms[normalizedStem(stem)] ?? [])
                + (m.english["relationship"].map { [String($0.split(separator: " ").last ?? "") + "*"] } ?? [])
            if names.contains(where: q.mentions) || q.mentions(rel) { return (.member(m), false) }
        }
        let workers = userData.household.filter { $0.role == .worker }
        for group in Self.workerGroups where q.mentions(group) {
            let named = workers.first { w in
                TypedQuestion([w.relationship, w.english["relationship"] ?? ""].joined(separator: " ")).mentions(group)
            }
            if let named { return (.member(named), false) }
        }
        if q.mentions(Self.workerWords), let w = workers.first { return (.member(w), true) }
        for v in userData.vehicles {
            let words =
                ([v.make, v.englishMake].compactMap { $0 }.flatMap { $0.split(separator: " ").map(String.init) })
            if q.mentions(Self.vehicleWords) || q.mentions(words) || q.text.contains(v.plate) {
                return (.vehicle(v), false)
            }
        }
        return (.user, false)
    }

    /// `stem` as `TypedQuestion` matches it (hamza and ta marbuta folded).
    func normalizedStem(_ stem: String) -> String { TypedQuestion(stem).words.first ?? stem }

    /// Whether `subject` is one `service` answers about: a member holding its document, or a vehicle for a vehicle
    /// service.
    public static func applies(_ service: ServiceInfo, to subject: ServiceSubject) -> Bool {
        switch subject {
        case .user: return false
        case .member(let m): return service.document.map { kind in m.documents.contains { $0.kind == kind } } ?? false
        case .vehicle: return service.isVehicleService
        }
    }

    /// `q` routed to `service` with a method's score `base`: its facets and subject by keywords, +0.5 when it asks
    /// a facet, +0.75 when the person or vehicle it names is one the service applies to. A vehicle named in a question
    /// about a service that is not about vehicles, or a worker named only by a general word (`عامل`) for a service
    /// about no document they hold, leaves the user as the subject.
    public func route(_ q: TypedQuestion, to service: ServiceInfo, base: Double) -> ServiceRoute {
        let facets = ServiceFacet.asked(in: q)
        var (subject, general) = subjectMatch(of: q)
        let applies = Self.applies(service, to: subject)
        let score = base + (facets.isEmpty ? 0 : 0.5) + (applies ? 0.75 : 0)
        if case .vehicle = subject, !service.isVehicleService { subject = .user }
        // `a worker` names one of the user's workers only for a service about a document they hold.
        if general, !applies { subject = .user }
        return ServiceRoute(service: service, facets: facets, subject: subject, score: score)
    }

    /// The route of `question`, or nil when it names no service. A question that names no service but asks a facet
    /// (`what is the late fine?`) follows up the service of the chat's last link, at 1 (+0.5 for the facet).
    public func route(_ q: TypedQuestion) -> ServiceRoute? {
        var best: ServiceRoute?
        for service in catalog.services {
            let base = subjectScore(service, q)
            guard base > 0 else { continue }
            let candidate = route(q, to: service, base: base + (q.mentions(service.actionKeywords) ? 1 : 0))
            if candidate.score > (best?.score ?? 0) { best = candidate }
        }
        if best == nil, !ServiceFacet.asked(in: q).isEmpty, let service = followedUp(q.previousLink) {
            return route(q, to: service, base: 1)
        }
        return best
    }

    /// The service a reply's link was about: a service page's, or the service whose link type it is.
    func followedUp(_ link: DeepLink?) -> ServiceInfo? {
        guard let link else { return nil }
        if link.serviceType == ServicesPlugin.infoLinkType {
            return catalog.services.first { $0.id == link.alertId }
        }
        return catalog.services.first { $0.linkType == link.serviceType }
    }
}

extension ServiceInfo {
    /// Whether the service is about a vehicle (its subject is the user's car).
    public var isVehicleService: Bool {
        ["vehicle_registration_renewal", "vehicle_ownership_transfer", "traffic_violations"].contains(id)
    }
}
