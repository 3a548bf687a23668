// A JDBC driver (MariaDB Connector/J, Debian's libmariadb-java) against Strata with its default
// options, then with server-side prepared statements (the binary protocol).
//
// Usage: java -cp DIR:DRIVER_JAR Jdbc PORT. Connects over TCP to 127.0.0.1 and to localhost;
// runs DDL, text and prepared statements with every column type, NULLs, a large value,
// transactions, errors, several result sets, a streamed result and metadata. Prints "ok" at the
// end; any failed check throws.

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

public class Jdbc {
    static final String CREATE = "CREATE TABLE every_type ("
        + "id INT PRIMARY KEY, ti TINYINT, si SMALLINT, mi MEDIUMINT, i INT, bi BIGINT, "
        + "ubi BIGINT UNSIGNED, de DECIMAL(20,6), fl FLOAT, db DOUBLE, ch CHAR(10), "
        + "vc VARCHAR(100) NOT NULL DEFAULT '', tx TEXT, bl BLOB, vb VARBINARY(100), d DATE, "
        + "dt DATETIME(6), ts TIMESTAMP NULL, tm TIME, y YEAR, bt BIT(8), j JSON, "
        + "e ENUM('small','large'), st SET('x','y','z'))";
    static final String COLUMNS =
        "ti, si, mi, i, bi, ubi, de, fl, db, ch, vc, tx, bl, vb, d, dt, ts, tm, y, bt, j, e, st";
    static final String LITERALS = "-128, -32768, -8388608, -2147483648, "
        + "-9223372036854775808, 18446744073709551615, -12345678901234.123456, 1.5, -2.25, "
        + "'fixed', 'variable ü', 'some text', X'00FF10', X'BEEF', '2024-02-29', "
        + "'2024-02-29 13:14:15.123456', '2001-02-03 04:05:06', '-838:59:59', 2155, "
        + "b'01011010', '{\"a\": [1, 2]}', 'large', 'x,z'";

    static void expect(Object got, Object want, String what) {
        boolean same = got instanceof byte[] && want instanceof byte[]
            ? Arrays.equals((byte[]) got, (byte[]) want)
            : Objects.equals(got, want);
        if (!same) {
            throw new AssertionError(what + ": got " + got + ", want " + want);
        }
    }

    static Connection connect(String host, int port, String options) throws SQLException {
        return DriverManager.getConnection(
            "jdbc:mariadb://" + host + ":" + port + "/" + options, "root", "");
    }

    /// One session of checks in database `db`.
    static void session(String host, int port, String options, String db) throws Exception {
        try (Connection conn = connect(host, port, options);
             Statement st = conn.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT @@version, CURRENT_USER(), DATABASE()")) {
                rs.next();
                expect(rs.getString(1).contains("Strata"), true, "version");
                expect(rs.getString(2).startsWith("root@"), true, "current user");
                expect(rs.getString(3), null, "no database yet");
            }
            st.execute("DROP DATABASE IF EXISTS " + db);
            st.execute("CREATE DATABASE " + db);
            conn.setCatalog(db);
            st.execute(CREATE);

            // The same row in by text and by a prepared statement; NULLs in a third.
            st.execute("INSERT INTO every_type (id, " + COLUMNS + ") VALUES (1, " + LITERALS + ")");
            String marks = String.join(", ", java.util.Collections.nCopies(24, "?"));
            try (PreparedStatement ps = conn.prepareStatement(
                    "INSERT INTO every_type (id, " + COLUMNS + ") VALUES (" + marks + ")")) {
                int k = 1;
                ps.setInt(k++, 2);
                ps.setByte(k++, (byte) -128);
                ps.setShort(k++, (short) -32768);
                ps.setInt(k++, -8388608);
                ps.setInt(k++, Integer.MIN_VALUE);
                ps.setLong(k++, Long.MIN_VALUE);
                ps.setBigDecimal(k++, new BigDecimal("18446744073709551615"));
                ps.setBigDecimal(k++, new BigDecimal("-12345678901234.123456"));
                ps.setFloat(k++, 1.5f);
                ps.setDouble(k++, -2.25);
                ps.setString(k++, "fixed");
                ps.setString(k++, "variable ü");
                ps.setString(k++, "some text");
                ps.setBytes(k++, new byte[] {0, (byte) 0xFF, 0x10});
                ps.setBytes(k++, new byte[] {(byte) 0xBE, (byte) 0xEF});
                ps.setDate(k++, Date.valueOf("2024-02-29"));
                ps.setTimestamp(k++, Timestamp.valueOf("2024-02-29 13:14:15.123456"));
                ps.setTimestamp(k++, Timestamp.valueOf("2001-02-03 04:05:06"));
                ps.setString(k++, "-838:59:59");
                ps.setInt(k++, 2155);
                ps.setBytes(k++, new byte[] {0x5A});
                ps.setString(k++, "{\"a\": [1, 2]}");
                ps.setString(k++, "large");
                ps.setString(k++, "x,z");
                expect(ps.executeUpdate(), 1, "prepared insert");
            }
            st.execute("INSERT INTO every_type (id) VALUES (3)");

            String[] names = COLUMNS.split(", ");
            List<List<String>> byId = new ArrayList<>();
            for (int id = 1; id <= 2; id++) {
                try (PreparedStatement ps = conn.prepareStatement(
                        "SELECT " + COLUMNS + " FROM every_type WHERE id = ?")) {
                    ps.setInt(1, id);
                    try (ResultSet rs = ps.executeQuery()) {
                        expect(rs.next(), true, "row " + id);
                        List<String> values = new ArrayList<>();
                        for (int c = 1; c <= names.length; c++) {
                            byte[] raw = rs.getBytes(c);
                            values.add(names[c - 1] + "=" + (names[c - 1].equals("bl")
                                || names[c - 1].equals("vb") || names[c - 1].equals("bt")
                                ? Arrays.toString(raw) : rs.getString(c)));
                        }
                        byId.add(values);
                        expect(rs.next(), false, "one row " + id);
                    }
                }
            }
            expect(byId.get(1), byId.get(0), "the row by text and by parameters");

            try (ResultSet rs = st.executeQuery("SELECT " + COLUMNS + " FROM every_type WHERE id = 1")) {
                rs.next();
                expect(rs.getByte("ti"), (byte) -128, "TINYINT");
                expect(rs.getLong("bi"), Long.MIN_VALUE, "BIGINT");
                expect(rs.getBigDecimal("ubi").toBigInteger(),
                    new BigInteger("18446744073709551615"), "BIGINT UNSIGNED");
                expect(rs.getBigDecimal("de"), new BigDecimal("-12345678901234.123456"), "DECIMAL");
                expect(rs.getFloat("fl"), 1.5f, "FLOAT");
                expect(rs.getDouble("db"), -2.25, "DOUBLE");
                expect(rs.getString("vc"), "variable ü", "VARCHAR");
                expect(rs.getBytes("bl"), new byte[] {0, (byte) 0xFF, 0x10}, "BLOB");
                expect(rs.getDate("d").toString(), "2024-02-29", "DATE");
                expect(rs.getTimestamp("dt").toString(), "2024-02-29 13:14:15.123456", "DATETIME(6)");
                expect(rs.getString("tm"), "-838:59:59", "TIME");
                expect(rs.getInt("y"), 2155, "YEAR");
                expect(rs.getBytes("bt"), new byte[] {0x5A}, "BIT");
                expect(rs.getString("j"), "{\"a\": [1, 2]}", "JSON");
                expect(rs.getString("e"), "large", "ENUM");
                expect(rs.getString("st"), "x,z", "SET");

                ResultSetMetaData meta = rs.getMetaData();
                expect(meta.getColumnCount(), 23, "column count");
                expect(meta.getColumnName(5), "bi", "column name");
                expect(meta.getColumnType(5), Types.BIGINT, "BIGINT type");
                expect(meta.getColumnType(7), Types.DECIMAL, "DECIMAL type");
                expect(meta.getPrecision(7), 20, "DECIMAL precision");
                expect(meta.getScale(7), 6, "DECIMAL scale");
                expect(meta.getColumnType(11), Types.VARCHAR, "VARCHAR type");
                expect(meta.isNullable(11), ResultSetMetaData.columnNoNulls, "NOT NULL");
                expect(meta.getTableName(1), "every_type", "table name");
            }

            try (ResultSet rs = st.executeQuery("SELECT " + COLUMNS + " FROM every_type WHERE id = 3")) {
                rs.next();
                for (String name : names) {
                    Object value = rs.getObject(name);
                    expect(value, name.equals("vc") ? "" : null, name + " default");
                }
            }

            // A large value both ways.
            st.execute("ALTER TABLE every_type ADD COLUMN big LONGBLOB");
            byte[] big = new byte[1 << 20];
            for (int b = 0; b < big.length; b++) {
                big[b] = (byte) b;
            }
            try (PreparedStatement ps = conn.prepareStatement("UPDATE every_type SET big = ? WHERE id = 3")) {
                ps.setBytes(1, big);
                ps.executeUpdate();
            }
            try (ResultSet rs = st.executeQuery("SELECT big, LENGTH(big) FROM every_type WHERE id = 3")) {
                rs.next();
                expect(rs.getBytes(1), big, "1 MiB LONGBLOB");
                expect(rs.getInt(2), big.length, "its length");
            }
            try (PreparedStatement ps = conn.prepareStatement("UPDATE every_type SET bl = ? WHERE id = 3")) {
                ps.setBytes(1, big);
                ps.executeUpdate();
                throw new AssertionError("1 MiB fit in a BLOB");
            } catch (SQLException e) {
                expect(e.getErrorCode() + " " + e.getSQLState(), "1406 22001", "BLOB too long");
            }

            // Transactions: a rolled-back change is gone, a committed one stays.
            conn.setAutoCommit(false);
            st.execute("UPDATE every_type SET vc = 'rolled back' WHERE id = 1");
            conn.rollback();
            st.execute("UPDATE every_type SET vc = 'committed' WHERE id = 2");
            conn.commit();
            conn.setAutoCommit(true);
            List<String> vcs = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT vc FROM every_type ORDER BY id")) {
                while (rs.next()) {
                    vcs.add(rs.getString(1));
                }
            }
            expect(vcs, List.of("variable ü", "committed", ""), "transactions");

            // Errors carry MySQL's code and SQLSTATE, and the connection goes on.
            String[][] failing = {
                {"SELECT nope FROM every_type", "1054 42S22"},
                {"INSERT INTO every_type (id) VALUES (1)", "1062 23000"},
                {"SELEKT 1", "1064 42000"},
            };
            for (String[] f : failing) {
                try {
                    st.execute(f[0]);
                    throw new AssertionError(f[0] + " did not fail");
                } catch (SQLException e) {
                    expect(e.getErrorCode() + " " + e.getSQLState(), f[1], f[0]);
                }
            }
            try (ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM every_type")) {
                rs.next();
                expect(rs.getInt(1), 3, "count after errors");
            }

            // A result read as it streams (the driver fetches rows as it goes).
            st.execute("CREATE TABLE many (id INT PRIMARY KEY, pad VARCHAR(200))");
            st.execute("SET cte_max_recursion_depth = 50000");
            st.execute("INSERT INTO many WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL "
                + "SELECT n + 1 FROM r WHERE n < 50000) SELECT n, REPEAT('p', 150) FROM r");
            try (Statement streaming = conn.createStatement()) {
                streaming.setFetchSize(100);
                long sum = 0;
                int rows = 0;
                try (ResultSet rs = streaming.executeQuery("SELECT id, pad FROM many")) {
                    while (rs.next()) {
                        sum += rs.getLong(1);
                        rows++;
                    }
                }
                expect(rows + " " + sum, "50000 1250025000", "streamed rows");
            }

            DatabaseMetaData dbMeta = conn.getMetaData();
            expect(dbMeta.getDatabaseProductVersion().contains("Strata"), true, "product version");
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = dbMeta.getTables(db, null, "%", null)) {
                while (rs.next()) {
                    tables.add(rs.getString("TABLE_NAME"));
                }
            }
            expect(tables, List.of("every_type", "many"), "tables");
            st.execute("DROP DATABASE " + db);
        }
    }

    /// Several result sets from one call (the driver must ask for multi-statements).
    static void multipleResults(int port) throws Exception {
        try (Connection conn = connect("127.0.0.1", port, "?allowMultiQueries=true");
             Statement st = conn.createStatement()) {
            List<String> sets = new ArrayList<>();
            boolean isResult = st.execute("SELECT 1 AS a; SELECT 'two' AS b, 3 AS c");
            while (isResult) {
                try (ResultSet rs = st.getResultSet()) {
                    while (rs.next()) {
                        sets.add(rs.getMetaData().getColumnLabel(1) + "=" + rs.getString(1));
                    }
                }
                isResult = st.getMoreResults();
            }
            expect(sets, List.of("a=1", "b=two"), "multiple result sets");
        }
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        session("127.0.0.1", port, "", "jdbc_text");
        session("localhost", port, "?useServerPrepStmts=true", "jdbc_binary");
        multipleResults(port);
        System.out.println("ok");
    }
}
