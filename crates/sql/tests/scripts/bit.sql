# BIT(M): M bits, stored as a number; written as a number, a bit-value literal (b'101') or a
# binary string (0x05), each read as a big-endian number; too many bits is 1406. Clients get
# the bits as big-endian bytes (this harness prints the number).
> CREATE DATABASE bits
ok 1
> USE bits
ok 0
> CREATE TABLE flag (id INT PRIMARY KEY, active BIT(1) NOT NULL DEFAULT b'0', mask BIT(10), INDEX (mask))
ok 0
> INSERT INTO flag VALUES (1, b'1', b'1010'), (2, 0, 1023), (3, 1, 0x3ff)
ok 3
> INSERT INTO flag (id) VALUES (4)
ok 1
> SELECT id, active, mask, active + 0, BIN(mask), HEX(mask) FROM flag ORDER BY mask, id
id	active	mask	active + 0	BIN(mask)	HEX(mask)
4	0	NULL	0	NULL	NULL
1	1	10	1	1010	A
2	0	1023	0	1111111111	3FF
3	1	1023	1	1111111111	3FF
> SELECT id FROM flag WHERE active = b'1' ORDER BY id
id
1
3
> SELECT id FROM flag WHERE mask = b'1010' AND active = 1
id
1
> SELECT COUNT(*) FROM flag WHERE mask > 100
COUNT(*)
2
> SELECT b'1000001' + 0, b'11' | b'100', b'0' = 0
b'1000001' + 0	b'11' | b'100'	b'0' = 0
65	7	1
> INSERT INTO flag VALUES (5, 2, 0)
error 1406 (22001): Data too long for column 'active' at row 1
> INSERT INTO flag VALUES (6, 0, 1024)
error 1406 (22001): Data too long for column 'mask' at row 1
> INSERT INTO flag VALUES (7, '1', 0)
error 1406 (22001): Data too long for column 'active' at row 1
> INSERT INTO flag VALUES (8, -1, 0)
error 1406 (22001): Data too long for column 'active' at row 1
> CREATE TABLE wide (b BIT(65))
error 1439 (42000): Display width out of range for column (max = 64)
> SELECT b'102'
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use: near 'b'102''
> SHOW CREATE TABLE flag
Table	Create Table
flag	CREATE TABLE `flag` (
  `id` int NOT NULL,
  `active` bit(1) NOT NULL DEFAULT b'0',
  `mask` bit(10) DEFAULT NULL,
  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */,
  KEY `mask` (`mask`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
