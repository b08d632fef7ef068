import TestSupport

/// The records and items of the SQLite store's tests too (``StoreFixture``).
typealias Fixture = StoreFixture
