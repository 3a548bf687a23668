# ENUM, SET and YEAR columns. Values are checked as in MySQL's strict mode (1265, 1264); a
# number is a member number (ENUM) or a bit set of members (SET). Stored as text, ENUM and SET
# sort as text, not by member number as in MySQL.
> CREATE DATABASE mt
ok 1
> USE mt
ok 0
> CREATE TABLE shirts (id INT PRIMARY KEY, size ENUM('small', 'medium', 'large'), colors SET('red', 'green', 'blue'), made YEAR)
ok 0
> INSERT INTO shirts VALUES (1, 'medium', 'blue,red', 2021), (2, 3, 5, 99), (3, 'small', '', '0'), (4, NULL, NULL, NULL)
ok 4
> SELECT * FROM shirts ORDER BY id
id	size	colors	made
1	medium	red,blue	2021
2	large	red,blue	1999
3	small		2000
4	NULL	NULL	NULL
> SELECT id FROM shirts WHERE size = 'large' OR FIND_IN_SET('red', colors) ORDER BY id
id
1
2
> INSERT INTO shirts VALUES (5, 'huge', 'red', 2020)
error 1265 (01000): Data truncated for column 'size' at row 1
> INSERT INTO shirts VALUES (5, 'small', 'red,pink', 2020)
error 1265 (01000): Data truncated for column 'colors' at row 1
> INSERT INTO shirts VALUES (5, 0, 'red', 2020)
error 1265 (01000): Data truncated for column 'size' at row 1
> INSERT INTO shirts VALUES (5, 'small', 8, 2020)
error 1265 (01000): Data truncated for column 'colors' at row 1
> INSERT INTO shirts VALUES (5, 'small', 'red', 1800)
error 1264 (22003): Out of range value for column 'made' at row 1
> UPDATE shirts SET size = 'large', colors = 'green,green', made = 5 WHERE id = 3
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT size, colors, made FROM shirts WHERE id = 3
size	colors	made
large	green	2005
> SHOW CREATE TABLE shirts
Table	Create Table
shirts	CREATE TABLE `shirts` (
  `id` int NOT NULL,
  `size` enum('small','medium','large') DEFAULT NULL,
  `colors` set('red','green','blue') DEFAULT NULL,
  `made` year DEFAULT NULL,
  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
> SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_NAME = 'shirts' ORDER BY ORDINAL_POSITION
COLUMN_NAME	DATA_TYPE	COLUMN_TYPE
id	int	int
size	enum	enum('small','medium','large')
colors	set	set('red','green','blue')
made	year	year
