import AbsherData
import SanadChat
import SanadCore

/// The renewal services a proactive alert leads to; the raw value is the deep link's `serviceType`.
public enum AlertServiceType: String, Sendable, CaseIterable, Codable {
    case drivingLicenseRenewal = "driving_license_renewal"
    case passportRenewal = "passport_renewal"
    case nationalIDRenewal = "national_id_renewal"

    /// The alert's title (`رخصة قيادتك على وشك الانتهاء`), in Arabic; `title(in:)` in a language.
    public var title: String { title(in: .arabic) }
    /// The alert's title once the document has expired (`رخصة قيادتك منتهية`).
    public var overdueTitle: String { overdueTitle(in: .arabic) }
    /// The service's name (`تجديد رخصة القيادة`).
    public var serviceName: String { serviceName(in: .arabic) }
    /// The document's name (`رخصة القيادة`).
    public var documentName: String { documentName(in: .arabic) }

    public func title(in language: ChatLanguage) -> String {
        switch (self, language) {
        case (.drivingLicenseRenewal, .arabic): return "رخصة قيادتك على وشك الانتهاء"
        case (.passportRenewal, .arabic): return "جواز سفرك على وشك الانتهاء"
        case (.nationalIDRenewal, .arabic): return "هويتك الوطنية على وشك الانتهاء"
        case (.drivingLicenseRenewal, .english): return "Your driving licence is about to expire"
        case (.passportRenewal, .english): return "Your passport is about to expire"
        case (.nationalIDRenewal, .english): return "Your national ID is about to expire"
        }
    }

    public func overdueTitle(in language: ChatLanguage) -> String {
        switch (self, language) {
        case (.drivingLicenseRenewal, .arabic): return "رخصة قيادتك منتهية"
        case (.passportRenewal, .arabic): return "جواز سفرك منتهي"
        case (.nationalIDRenewal, .arabic): return "هويتك الوطنية منتهية"
        case (.drivingLicenseRenewal, .english): return "Your driving licence has expired"
        case (.passportRenewal, .english): return "Your passport has expired"
        case (.nationalIDRenewal, .english): return "Your national ID has expired"
        }
    }

    public func serviceName(in language: ChatLanguage) -> String {
        switch (self, language) {
        case (.drivingLicenseRenewal, .arabic): return "تجديد رخصة القيادة"
        case (.passportRenewal, .arabic): return "تجديد جواز السفر"
        case (.nationalIDRenewal, .arabic): return "تجديد الهوية الوطنية"
        case (.drivingLicenseRenewal, .english): return "driving licence renewal"
        case (.passportRenewal, .english): return "passport renewal"
        case (.nationalIDRenewal, .english): return "national ID renewal"
        }
    }

    public func documentName(in language: ChatLanguage) -> String {
        switch (self, language) {
        case (.drivingLicenseRenewal, .arabic): return "رخصة القيادة"
        case (.passportRenewal, .arabic): return "جواز السفر"
        case (.nationalIDRenewal, .arabic): return "الهوية الوطنية"
        case (.drivingLicenseRenewal, .english): return "driving licence"
        case (.passportRenewal, .english): return "passport"
        case (.nationalIDRenewal, .english): return "national ID"
        }
    }

    /// Whether the document's name is grammatically feminine (رخصة، هوية) or not (جواز), for verb agreement.
    public var isFeminine: Bool { self != .passportRenewal }

    /// Wordings that name the document, for the grounding check (the title, the document's name, the possessive).
    public var documentWordings: [String] { documentWordings(in: .arabic) }

    public func documentWordings(in language: ChatLanguage) -> [String] {
        let own = [title(in: language), overdueTitle(in: language), documentName(in: language)]
        switch (self, language) {
        case (.drivingLicenseRenewal, .arabic): return own + ["رخصة قيادتك", "رخصة قيادة"]
        case (.passportRenewal, .arabic): return own + ["جواز سفرك", "جواز سفر", "الجواز"]
        case (.nationalIDRenewal, .arabic): return own + ["هويتك الوطنية", "هويتك", "الهوية"]
        case (.drivingLicenseRenewal, .english): return own + ["driving license", "licence", "license"]
        case (.passportRenewal, .english): return own + ["Passport"]
        case (.nationalIDRenewal, .english): return own + ["ID card", "identity card", "national identity"]
        }
    }
}

/// An alert for a document that expires within the window, or has expired (overdue: negative days).
public struct ProactiveAlert: Sendable, Equatable {
    /// The alert id (the document's id).
    public var id: String
    public var serviceType: AlertServiceType
    public var document: UserDocument
    /// Days from today to the expiry date (0 = expires today; negative = expired that many days ago).
    public var daysRemaining: Int

    public init(id: String, serviceType: AlertServiceType, document: UserDocument, daysRemaining: Int) {
        self.id = id
        self.serviceType = serviceType
        self.document = document
        self.daysRemaining = daysRemaining
    }

    public var isOverdue: Bool { daysRemaining < 0 }

    /// `رخصة قيادتك على وشك الانتهاء`, or `رخصة قيادتك منتهية` once it has expired.
    public var title: String { title(in: .arabic) }

    public func title(in language: ChatLanguage) -> String {
        isOverdue ? serviceType.overdueTitle(in: language) : serviceType.title(in: language)
    }

    /// `{serviceType, title, alertId}` of this alert.
    public var deepLink: DeepLink { deepLink(in: .arabic) }

    /// The link with its title in `language`.
    public func deepLink(in language: ChatLanguage) -> DeepLink {
        DeepLink(serviceType: serviceType.rawValue, title: title(in: language), alertId: id)
    }

    /// The alert as JSON for tools.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "alertId": .string(id), "serviceType": .string(serviceType.rawValue), "title": .string(title),
            "service": .string(serviceType.serviceName), "daysRemaining": .number(Double(daysRemaining)),
            "expiryDate": .string(document.expiryDate.description),
            "url": .string(deepLink.url(AbsherSettings.linkFormat)),
            "chip": .string(ProactiveAlertsPlugin.chipPrefix + title),
        ]
        if let n = document.number { o["documentNumber"] = .string(n) }
        if let f = document.renewalFeeSAR { o["renewalFeeSAR"] = .number(Double(f)) }
        return .object(o)
    }
}

/// The active alerts: every expired document (an overdue alert, never dropped) and the documents expiring in
/// `0...windowDays` days from `today`; the most overdue first, then the soonest (documents with the same date keep
/// their order in the file).
public func deriveAlerts(from documents: [UserDocument], today: CivilDate, windowDays: Int) -> [ProactiveAlert] {
    let alerts = documents.enumerated().compactMap { offset, doc -> (Int, ProactiveAlert)? in
        let days = today.days(until: doc.expiryDate)
        guard days <= windowDays else { return nil }
        return (
            offset, ProactiveAlert(id: doc.id, serviceType: doc.type.renewalService, document: doc, daysRemaining: days)
        )
    }
    return alerts.sorted { a, b in
        a.1.daysRemaining != b.1.daysRemaining ? a.1.daysRemaining < b.1.daysRemaining : a.0 < b.0
    }.map(\.1)
}

extension DocumentType {
    /// The renewal service an expiring document of this kind leads to.
    public var renewalService: AlertServiceType {
        switch self {
        case .drivingLicense: return .drivingLicenseRenewal
        case .passport: return .passportRenewal
        case .nationalID: return .nationalIDRenewal
        }
    }
}
