"""A small fixed English text, written for this project, used as "text-like" model input.

It is plain, ordinary prose (no downloads, no third-party corpus), long enough to cut
several windows of a few hundred tokens. :func:`text_windows` cuts seeded windows.
"""
from __future__ import annotations

import numpy as np

CORPUS = """\
The village sits where the river bends twice before it reaches the sea. In the morning the fog comes up \
from the water and covers the fields, and the farmers wait for it to lift before they take the cows out. \
By ten o'clock the sun is usually strong enough to burn it away, and the whole valley turns green and gold.

There is one road into the village and one road out of it. The road into the village crosses an old stone \
bridge that was built more than two hundred years ago. Every spring the council talks about repairing it, \
and every spring they decide that it can wait another year. The children like to stand on the bridge and \
drop leaves into the river, then run to the other side to see which leaf comes out first.

The school is a small brick building next to the church. It has three classrooms, a library with a \
wooden floor that creaks when you walk on it, and a garden where the pupils grow beans, carrots and \
sunflowers. The teacher, Mrs. Holloway, has worked there for almost thirty years. She knows every family \
in the village, and most of the parents were once her pupils.

On Saturdays there is a market in the square. People come from the farms around the valley to sell \
eggs, cheese, bread, honey and vegetables. The baker always arrives first, because his bread sells out \
before noon. A man with a grey beard sells old books from the back of his van, and he will tell you the \
story of each one if you have the time to listen.

In the autumn the weather changes quickly. One day the sky is clear and the air is warm, and the next \
day a cold wind blows from the north and the rain does not stop until the evening. The river rises, \
and sometimes it floods the lower fields. The farmers move their animals to higher ground and wait for \
the water to go down again.

Winter is quiet. The days are short, and most people stay at home in the evenings. They read, they \
cook long meals, and they visit their neighbours. When it snows, the children build a snowman in the \
square and the older people complain about the cold, but everyone agrees that the village is at its \
most beautiful under a clean white blanket of snow.

The history of the valley is written in its walls and paths. The stones of the old mill came from the \
hill above the church, and the path that climbs that hill was made by the workers who carried them \
down. Today the mill is a small museum. It shows how flour was made, how the water turned the great \
wheel, and how the families who lived here earned their living a century ago.

Visitors often ask why so few people leave the village. The answer is simple. Life here is slow, but \
it is not empty. There is work in the fields and in the shops, there is a school for the children, \
and there is always someone to talk to. When the young people go away to study in the city, many of \
them come back, because they miss the river, the market and the quiet evenings by the fire.

A good day in the village begins with a walk along the river. You pass the bridge, the mill and the \
school, and you reach the market just as the baker opens his stall. You buy a loaf of warm bread and a \
jar of honey, and you sit on the bench by the fountain to eat. The church bell rings, the pigeons fly \
up from the roof, and for a moment the whole square is still.
"""


def text_windows(token_ids, *, n: int, length: int, seed: int) -> np.ndarray:
    """``n`` windows of ``length`` consecutive tokens at seeded offsets, shape ``(n, length)``."""
    ids = np.asarray(token_ids, dtype=np.int64)
    if ids.size < length:
        raise ValueError(f"the corpus has {ids.size} tokens, fewer than length={length}")
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, ids.size - length + 1, size=n)
    return np.stack([ids[s:s + length] for s in starts])
