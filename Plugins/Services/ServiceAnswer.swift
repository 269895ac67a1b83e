import AbsherData
import SanadChat
import SanadCore

/// What a typed question asks about a service. None named → an overview (every part).
public enum ServiceAspect: String, Sendable, CaseIterable {
    /// When the user's document expires and how many days remain.
    case expiry
    case fee
    case requirements

    /// The words that ask for each aspect (Arabic, Gulf dialect and English; see `TypedQuestion`).
    public var keywords: [String] {
        switch self {
        case .expiry:
            return [
                "متى", "ينتهي*", "تنتهي*", "انتهاء", "انتهت", "انتهى", "خلص*", "يخلص*", "تخلص*", "صلاحي*", "باقي",
                "كم يوم", "تاريخ*", "expir*", "when", "valid*", "days left",
            ]
        case .fee:
            return [
                "رسوم*", "رسم", "سعر*", "بكم", "كم سعر", "تكلف*", "يكلف*", "كلف*", "فلوس", "مبلغ*", "كم ادفع",
                "fee*", "cost*", "price*", "how much", "pay",
            ]
        case .requirements:
            return [
                "متطلبات*", "شروط*", "شرط", "احتاج*", "يحتاج*", "مطلوب*", "المطلوب", "اوراق*", "مستندات*", "وش يبون",
                "ايش يبون", "require*", "need*", "documents",
            ]
        }
    }

    /// The aspects `question` asks about, in this enum's order; empty when it names none.
    public static func asked(in question: TypedQuestion) -> [ServiceAspect] {
        allCases.filter { question.mentions($0.keywords) }
    }
}

/// The grounded answer to a typed question about a service: template sentences built only from the knowledge base
/// and the user's document, the facts the model's wording must keep, and the service's link.
public enum ServiceAnswer {
    /// `جواز السفر ينتهي في 2027-02-05، باقي 75 يوماً.` (or `… انتهى في …، منذ 3 أيام.` / `… ينتهي اليوم (…).`)
    static func status(of doc: UserDocument, service: ServiceInfo, today: CivilDate) -> String {
        let name = service.documentName ?? service.name
        let days = today.days(until: doc.expiryDate)
        if days < 0 {
            return
                "\(name) \(service.documentFeminine ? "انتهت" : "انتهى") في \(doc.expiryDate)، منذ \(arabicDays(-days))."
        }
        let verb = service.documentFeminine ? "تنتهي" : "ينتهي"
        if days == 0 { return "\(name) \(verb) اليوم (\(doc.expiryDate))." }
        return "\(name) \(verb) في \(doc.expiryDate)، باقي \(arabicDays(days))."
    }

    static func fees(of service: ServiceInfo, doc: UserDocument?) -> String {
        var text =
            service.fees.isEmpty
            ? "ليس لهذه الخدمة رسوم ثابتة في دليل الخدمات."
            : "الرسوم: " + service.fees.map(\.sentence).joined(separator: "، و") + "."
        if let fee = doc?.renewalFeeSAR, let name = service.documentName {
            text += " ورسوم تجديد \(name) المسجلة في بياناتك \(fee) ريال."
        }
        return text
    }

    static func requirements(of service: ServiceInfo) -> String {
        service.requirements.isEmpty
            ? "لا متطلبات مسجلة لهذه الخدمة في دليل الخدمات."
            : "المتطلبات: " + service.requirements.joined(separator: "، ") + "."
    }

    /// The sentences that answer `aspects` (all of them for an empty list), in order: description (overview only),
    /// expiry, fees, requirements.
    static func sentences(
        service: ServiceInfo, doc: UserDocument?, today: CivilDate, aspects: [ServiceAspect]
    ) -> [String] {
        let all = aspects.isEmpty
        var out: [String] = []
        if all { out.append(service.description) }
        if all || aspects.contains(.expiry) {
            if let doc {
                out.append(status(of: doc, service: service, today: today))
            } else if let name = service.documentName {
                out.append("لا يوجد في بياناتك \(name).")
            } else if !all {
                out.append("هذه الخدمة ليس لها تاريخ انتهاء في بياناتك.")
            }
        }
        if all || aspects.contains(.fee) { out.append(fees(of: service, doc: doc)) }
        if all || aspects.contains(.requirements) { out.append(requirements(of: service)) }
        return out
    }

    /// The link the answer carries: the renewal page of the user's document, or the service's information page.
    static func link(service: ServiceInfo, doc: UserDocument?) -> DeepLink {
        if let doc, service.linkType != ServicesPlugin.infoLinkType {
            return DeepLink(serviceType: service.linkType, title: service.name, alertId: doc.id)
        }
        return DeepLink(serviceType: ServicesPlugin.infoLinkType, title: service.name, alertId: service.id)
    }

    /// The whole grounded reply to `question` about `service`.
    public static func grounded(
        question: String, service: ServiceInfo, doc: UserDocument?, today: CivilDate, aspects: [ServiceAspect]
    ) -> GroundedReply {
        let lines = sentences(service: service, doc: doc, today: today, aspects: aspects)
        let fallback = "\(service.name): " + lines.joined(separator: " ") + " تقدر تبدأ من الرابط أدناه."
        var names = [service.name] + (service.documentName.map { [$0] } ?? [])
        names += service.keywords.filter { $0.hasSuffix("*") && arabicLetterShare($0) > 0.5 }.map {
            String($0.dropLast())
        }
        var facts = [GroundingFact(name: "الخدمة (\(service.name))", accepted: names)]
        if let doc, aspects.isEmpty || aspects.contains(.expiry) {
            let d = abs(today.days(until: doc.expiryDate))
            facts.append(
                GroundingFact(
                    name: "تاريخ الانتهاء (\(doc.expiryDate))",
                    accepted: ["\(doc.expiryDate)", arabicDays(d), "\(d) يوم", "\(d) يوما", "\(d) أيام"]))
        }
        if aspects.contains(.fee) {
            if let fee = doc?.renewalFeeSAR ?? service.fees.first?.amountSAR {
                facts.append(
                    GroundingFact(
                        name: "الرسوم (\(fee))",
                        accepted: fee == 0 ? ["بدون رسوم", "مجان"] : ["\(fee) ريال", "\(fee) ر"]))
            }
        }
        if aspects.contains(.requirements), let first = service.requirements.first {
            facts.append(GroundingFact(name: "المتطلبات (\(first))", accepted: [first]))
        }
        let system = """
            You are Sanad, the assistant of the Absher government e-services app. Reply in Arabic only, in two or \
            three short sentences. Use only these facts, exactly, and add no other numbers or dates:
            - الخدمة: \(service.name)
            \(lines.map { "- " + $0 }.joined(separator: "\n"))
            Answer the user's question, then tell them to start from the link below.
            """
        return GroundedReply(
            messages: [.system(system), .user(question)], facts: facts,
            allowedNumbers: digitRuns(normalizeArabic(fallback)), requireArabic: true, fallback: fallback,
            deepLink: link(service: service, doc: doc))
    }
}
