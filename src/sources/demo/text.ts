// Word lists and the text builder of the demo network. All strings are made up; every character is
// in the Basic Multilingual Plane (no emoji), so entity offsets are the same in UTF-16 code units and
// in code points.
import type { Rng } from './prng.js';

export type Lang = 'en' | 'es' | 'fr' | 'de' | 'ja' | 'pt';

export const LANGS: readonly Lang[] = ['en', 'es', 'fr', 'de', 'ja', 'pt'];
/** Cumulative shares of users' primary languages, in the order of LANGS. */
export const LANG_SHARES: readonly number[] = [0.45, 0.6, 0.69, 0.78, 0.9, 1];

interface LangPack {
  sep: string;
  openers: readonly string[];
  subjects: readonly string[];
  predicates: readonly string[];
  closers: readonly string[];
  tags: readonly string[];
  linkIntros: readonly string[];
}

export const PACKS: Record<Lang, LangPack> = {
  en: {
    sep: ' ',
    openers: ['Honestly,', 'Today', 'Quick thought:', 'Reminder:', 'Not gonna lie,', 'Small win:', 'Update:', 'So', 'Well,', 'Hot take:'],
    subjects: [
      'the morning light', 'my sourdough starter', 'the new bike lane', "this week's crossword", 'the old lighthouse',
      'our community garden', 'the late train', 'a good cup of tea', 'the river walk', 'my tomato plants',
      'the library book sale', 'this tiny cafe', 'the jazz trio downstairs', 'the weekend market', 'my reading list',
    ],
    predicates: [
      'is better than expected', 'needs more attention', 'made my day', 'is surprisingly calm', 'keeps getting better',
      'deserves a longer post', 'was worth the wait', 'is all I think about', 'feels like autumn already', 'taught me patience',
    ],
    closers: ['.', '!', '...', '?', '. More soon.', '. Thoughts?'],
    tags: ['gardening', 'coffee', 'books', 'cycling', 'jazz', 'baking', 'photography', 'opensource', 'weekend', 'hiking'],
    linkIntros: ['Worth a read:', 'Found this:', 'Notes here:'],
  },
  es: {
    sep: ' ',
    openers: ['Hoy', 'La verdad,', 'Recordatorio:', 'Por fin', 'Pequeño logro:', 'Bueno,', 'Ojo:'],
    subjects: [
      'el café de la esquina', 'mi huerto urbano', 'la nueva ruta en bici', 'el mercado del sábado', 'la biblioteca del barrio',
      'el atardecer en el puerto', 'mi lista de lecturas', 'el tren de la tarde', 'la panadería nueva', 'el concierto de anoche',
    ],
    predicates: [
      'me alegró el día', 'está mejor que nunca', 'merece una visita', 'sigue sorprendiendo', 'necesita más cariño',
      'valió la pena', 'me tiene pensando', 'es pura calma',
    ],
    closers: ['.', '!', '...', '. ¿Qué opinan?'],
    tags: ['cafe', 'libros', 'huerto', 'ciclismo', 'musica', 'fotografia', 'findesemana', 'cocina'],
    linkIntros: ['Vale la pena:', 'Para leer:', 'Aquí va:'],
  },
  fr: {
    sep: ' ',
    openers: ["Aujourd'hui", 'Franchement,', 'Rappel :', 'Enfin', 'Petite victoire :', 'Bon,', 'Alors'],
    subjects: [
      'le marché du dimanche', 'mon jardin partagé', 'la nouvelle piste cyclable', 'le café du coin', 'la bibliothèque du quartier',
      'le coucher de soleil sur le port', 'ma pile de livres', 'le dernier train', 'la boulangerie en bas', 'le concert de hier soir',
    ],
    predicates: [
      'a illuminé ma journée', 'mérite le détour', 'est plus calme que prévu', "s'améliore chaque semaine", 'demande de la patience',
      'valait vraiment le coup', 'me fait réfléchir',
    ],
    closers: ['.', ' !', '...', '. Vos avis ?'],
    tags: ['jardin', 'lecture', 'velo', 'cuisine', 'musique', 'photo', 'weekend', 'cafe'],
    linkIntros: ['À lire :', 'Trouvé ici :', 'Les notes :'],
  },
  de: {
    sep: ' ',
    openers: ['Heute', 'Ehrlich gesagt,', 'Erinnerung:', 'Endlich', 'Kleiner Erfolg:', 'Also', 'Kurz notiert:'],
    subjects: [
      'der Wochenmarkt', 'mein Balkongarten', 'der neue Radweg', 'das Café an der Ecke', 'die Stadtbibliothek',
      'der Sonnenuntergang am Hafen', 'mein Bücherstapel', 'der letzte Zug', 'die kleine Bäckerei', 'das Konzert gestern',
    ],
    predicates: [
      'hat meinen Tag gerettet', 'ist besser als erwartet', 'braucht mehr Geduld', 'wird jede Woche besser', 'lohnt sich wirklich',
      'ist überraschend ruhig', 'bringt mich zum Nachdenken',
    ],
    closers: ['.', '!', '...', '. Was meint ihr?'],
    tags: ['garten', 'lesen', 'radfahren', 'kaffee', 'musik', 'fotografie', 'wochenende', 'backen'],
    linkIntros: ['Lesenswert:', 'Gefunden:', 'Notizen hier:'],
  },
  ja: {
    sep: '',
    openers: ['今日は', 'やっと', '正直、', 'ちょっとした報告：', 'メモ：', 'そういえば'],
    subjects: [
      '近所のカフェ', '朝の散歩', '新しい自転車道', '週末の市場', '図書館の古本市', '港の夕焼け', '読みかけの本',
      'ベランダの家庭菜園', '最終電車', '小さなパン屋',
    ],
    predicates: ['が最高でした', 'について考えています', 'に癒されました', 'が思ったより良かった', 'をもっと楽しみたい', 'が気になっています'],
    closers: ['。', '！', '…', '。また書きます。'],
    tags: ['カフェ巡り', '読書', '散歩', '写真', '家庭菜園', '週末', 'パン'],
    linkIntros: ['参考：', 'メモ：', 'こちら：'],
  },
  pt: {
    sep: ' ',
    openers: ['Hoje', 'Sinceramente,', 'Lembrete:', 'Finalmente', 'Pequena vitória:', 'Bom,', 'Então'],
    subjects: [
      'o café da esquina', 'minha horta na varanda', 'a nova ciclovia', 'a feira de sábado', 'a biblioteca do bairro',
      'o pôr do sol no porto', 'minha lista de leitura', 'o último trem', 'a padaria nova', 'o show de ontem',
    ],
    predicates: [
      'fez o meu dia', 'está melhor do que nunca', 'vale a visita', 'continua surpreendendo', 'precisa de mais atenção',
      'valeu a pena', 'me deixou pensando',
    ],
    closers: ['.', '!', '...', '. O que acham?'],
    tags: ['cafe', 'livros', 'horta', 'ciclismo', 'musica', 'fotografia', 'fimdesemana', 'receitas'],
    linkIntros: ['Vale a leitura:', 'Achei isto:', 'Notas aqui:'],
  },
};

// Handles, names and places. All invented.
export const ADJECTIVES = [
  'quiet', 'amber', 'brisk', 'clever', 'dusty', 'early', 'fuzzy', 'gentle', 'hazel', 'icy', 'jolly', 'kind', 'lucky', 'mellow',
  'nimble', 'olive', 'plucky', 'rapid', 'sunny', 'tidy', 'upbeat', 'vivid', 'witty', 'young', 'zesty', 'bold', 'calm', 'dapper',
] as const;
export const NOUNS = [
  'falcon', 'otter', 'maple', 'harbor', 'comet', 'pebble', 'lantern', 'meadow', 'willow', 'badger', 'cedar', 'fjord', 'heron',
  'kettle', 'lynx', 'marble', 'nectar', 'orchid', 'parrot', 'quartz', 'raven', 'sparrow', 'thistle', 'walrus', 'yarrow', 'zephyr',
] as const;
export const FIRST_NAMES = [
  'Ada', 'Bruno', 'Chiara', 'Dmitri', 'Elena', 'Farah', 'Gustavo', 'Hana', 'Ivo', 'Jun', 'Kofi', 'Lena', 'Mateo', 'Nadia', 'Oskar',
  'Priya', 'Quentin', 'Rosa', 'Sven', 'Tomoko', 'Ugo', 'Vera', 'Wanjiru', 'Xavier', 'Yusuf', 'Zoe', 'Amara', 'Benedikt', 'Camille',
] as const;
export const LAST_NAMES = [
  'Abernathy', 'Brightwater', 'Castellan', 'Dunmore', 'Esterhall', 'Fairbrook', 'Greymoor', 'Hollins', 'Ivers', 'Juniper',
  'Kestrel', 'Larkspur', 'Merriweather', 'Northcott', 'Oakhurst', 'Pendleford', 'Quillfeather', 'Rowntree', 'Stillwater',
  'Thornbury', 'Underhill', 'Valecourt', 'Whitlock', 'Yardley',
] as const;
export const PLACES = [
  'Port Ellery', 'Lower Wexham', 'Calloway Bay', 'North Brindle', 'Saint Orrin', 'Vellmoor', 'Hatherby Cross', 'Lake Ambrin',
  'Old Tessaly', 'Marrowgate', 'Kingsfold', 'Riverstead', 'Duncarrow', 'Fenwick Harbour', 'Alderbury', 'Somewhere by the sea',
] as const;
export const INTERESTS = [
  'gardening', 'long walks', 'film photography', 'bread baking', 'board games', 'cycling', 'jazz records', 'birdwatching',
  'open source', 'old maps', 'tea', 'running', 'poetry', 'pottery', 'chess', 'astronomy', 'sailing', 'urban sketching',
] as const;
export const ORG_SUFFIXES = ['Works', 'Collective', 'Supply Co.', 'Studio', 'Labs', 'Outfitters', 'Bakery', 'Press'] as const;
export const GOV_BODIES = ['Department of', 'Office of', 'Ministry of', 'Bureau of'] as const;
export const GOV_TOPICS = ['Parks and Rivers', 'Lighthouses', 'Public Libraries', 'Weather Notices', 'Road Works', 'Harbours'] as const;
export const LINK_SITES = ['news.demo.invalid', 'blog.demo.invalid', 'notes.demo.invalid', 'recipes.demo.invalid'] as const;
export const COMMUNITY_TOPICS = [
  'Balcony Gardeners', 'Film Photography', 'Sourdough Bakers', 'Night Sky Watchers', 'Board Game Night', 'Urban Sketchers',
  'Harbour Walkers', 'Open Source Newcomers', 'Jazz Record Collectors', 'Weekend Cyclists', 'Tiny House Builders',
  'Tea Tasting Circle', 'Chess Puzzles', 'Birdwatching Notes', 'Pottery Wheel', 'Trail Runners', 'Poetry Corner',
  'Old Maps Society', 'Home Fermenters', 'Lighthouse Lovers',
] as const;
export const COMMUNITY_QUALIFIERS = ['', 'of Port Ellery', 'Beginners', 'Worldwide', 'Weekly', 'Club', 'Circle', 'Exchange'] as const;
export const COMMUNITY_RULES: ReadonlyArray<readonly [string, string]> = [
  ['Be kind', 'Treat other members with respect; no harassment.'],
  ['Stay on topic', 'Posts should relate to what the community is about.'],
  ['No spam', 'No advertising, repeated posts or link farming.'],
  ['Credit your sources', "Say where images and quotes come from when they aren't yours."],
  ['No personal data', "Don't share anyone's private information."],
  ['Use content warnings', 'Mark spoilers and sensitive topics.'],
  ['English or translation', 'Add a short translation when posting in another language.'],
];

/** Text with entities whose offsets are character positions of `text`. */
export class TextBuilder {
  text = '';
  readonly hashtags: { tag: string; start: number; end: number }[] = [];
  readonly urls: { url: string; expandedUrl: string; displayUrl: string; start: number; end: number }[] = [];
  readonly mentions: { username: string; id: string | null; start: number; end: number }[] = [];

  plain(s: string): this {
    this.text += s;
    return this;
  }

  hashtag(tag: string): this {
    const start = this.text.length;
    this.text += `#${tag}`;
    this.hashtags.push({ tag, start, end: this.text.length });
    return this;
  }

  mention(username: string, id: string | null): this {
    const start = this.text.length;
    this.text += `@${username}`;
    this.mentions.push({ username, id, start, end: this.text.length });
    return this;
  }

  url(url: string, expandedUrl: string): this {
    const start = this.text.length;
    this.text += url;
    const bare = expandedUrl.replace(/^https?:\/\//, '');
    const displayUrl = bare.length > 24 ? `${bare.slice(0, 23)}…` : bare;
    this.urls.push({ url, expandedUrl, displayUrl, start, end: this.text.length });
    return this;
  }

  /** Appends another builder's text and entities (offsets shifted). */
  append(other: TextBuilder): this {
    const shift = this.text.length;
    this.text += other.text;
    for (const h of other.hashtags) this.hashtags.push({ ...h, start: h.start + shift, end: h.end + shift });
    for (const u of other.urls) this.urls.push({ ...u, start: u.start + shift, end: u.end + shift });
    for (const m of other.mentions) this.mentions.push({ ...m, start: m.start + shift, end: m.end + shift });
    return this;
  }
}

const CODE_CHARS = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export function shortCode(rng: Rng, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += CODE_CHARS[rng.int(CODE_CHARS.length)];
  return s;
}

/** One sentence in the language, without entities. */
export function sentence(rng: Rng, lang: Lang): string {
  const p = PACKS[lang];
  const opener = rng.chance(0.7) ? rng.pick(p.openers) + p.sep : '';
  return capitalize(`${opener}${rng.pick(p.subjects)}${p.sep}${rng.pick(p.predicates)}${rng.pick(p.closers)}`);
}

export function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
