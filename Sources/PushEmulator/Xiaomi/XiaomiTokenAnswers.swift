extension EmulatorConfiguration.VendorTokenAnswer {
    /// The prefixes the Xiaomi side refuses by default. The reason is only a label: every refused regId goes to
    /// `data.bad_regids`.
    public static let xiaomiDefaults: [Self] = ["unregistered", "invalid", "badtoken", "illegal"]
        .map { .init(prefix: $0, reason: "bad_regid") }
}
